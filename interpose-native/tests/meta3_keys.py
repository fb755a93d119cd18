"""Keys and fields of a landed metadata table in format 3 (the table README), for the e2e scripts that doctor or
read meta.tbl from Python: the table stores names under each directory's names base, so keys are rebuilt here
along the breadth-first order (a parent always comes before its children)."""
import struct

ENTRY = 44


def entries(data):
    """Yields (index, key bytes, st_mode, st_size, offset of the entry's flags byte) for every entry."""
    count, = struct.unpack_from("<Q", data, 16)
    entries_off, = struct.unpack_from("<Q", data, 32)
    attrs_off, = struct.unpack_from("<Q", data, 48)
    names_off, = struct.unpack_from("<Q", data, 64)
    keys, full = [b""], [b""]
    for i in range(count):
        e = entries_off + ENTRY * i
        size = int.from_bytes(data[e + 8:e + 14], "little")
        attr, parent, off, n, flags = struct.unpack_from("<HIIBB", data, e + 14)
        mode, = struct.unpack_from("<I", data, attrs_off + 16 * attr)
        if i > 0:
            p = entries_off + ENTRY * parent
            base = int.from_bytes(data[p + 26:p + 32], "little")
            name = bytes(data[names_off + base + off:names_off + base + off + n])
            if flags & 2:
                name = full[parent] + name
            full.append(name)
            keys.append(keys[parent] + b"/" + name if parent else name)
        yield i, keys[i], mode, size, e + 25
