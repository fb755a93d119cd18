/* crc32c_ref: CRC32C (Castagnoli, reflected 0x82f63b78), bitwise: slow and obviously right. For the C tests that
 * recompute what a Java writer recorded (partition CRCs, the metadata table's CRC); the shim itself never sums. */
#ifndef FANSTORE_CRC32C_REF_H
#define FANSTORE_CRC32C_REF_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t crc32c(uint32_t crc, const uint8_t *p, size_t n)
{
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

#endif
