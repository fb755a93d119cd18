package org.fanstore.runtime.placement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** --local-capacity against the real file system of a temporary directory. */
class LocalCapacityTest {
    @TempDir
    Path dir;

    @Test
    void sizesAreTheBudget() throws Exception {
        FileStore store = Files.getFileStore(dir);
        assertEquals(500L << 20, LocalCapacity.parse("500M").budget(store));
        assertEquals(2L << 30, LocalCapacity.parse("2g").budget(store));
        assertEquals(4096, LocalCapacity.parse("4K").budget(store));
        assertEquals(12345, LocalCapacity.parse("12345").budget(store));
    }

    @Test
    void aPercentageIsOfTheFileSystemsSize() throws Exception {
        FileStore store = Files.getFileStore(dir);
        assertEquals(store.getTotalSpace() / 100 * 50, LocalCapacity.parse("50%").budget(store));
        assertEquals(0, LocalCapacity.parse("0%").budget(store));
    }

    @Test
    void autoLeavesTheMarginFree() throws Exception {
        FileStore store = Files.getFileStore(dir);
        long margin = store.getTotalSpace() / 10;
        long remaining = LocalCapacity.parse("auto").budget(store);
        assertTrue(remaining <= store.getUsableSpace() - margin + (64L << 20), remaining + " with margin " + margin);
    }

    @Test
    void nonsenseIsRefusedWithTheAcceptedForms() {
        for (String bad : new String[] {"", "lots", "-1G", "101%", "5X", "1.5G"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LocalCapacity.parse(bad));
            assertTrue(e.getMessage().contains("--local-capacity") && e.getMessage().contains("500M"), e.getMessage());
        }
    }
}
