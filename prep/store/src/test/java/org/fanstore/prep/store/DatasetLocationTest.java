package org.fanstore.prep.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class DatasetLocationTest {
    @Test
    void localPaths() {
        DatasetLocation l = DatasetLocation.dataset("/lustre/imagenet.fs");
        assertFalse(l.isObjectStore());
        assertEquals(Path.of("/lustre/imagenet.fs"), l.path());
        assertEquals("imagenet.fs", l.name());
        assertNull(l.bucket());
        assertEquals("./x.fs", DatasetLocation.dataset("./x.fs").toString());
    }

    @Test
    void datasetInABucket() {
        DatasetLocation l = DatasetLocation.dataset("s3://my-bucket/data/sets/imagenet.fs");
        assertTrue(l.isObjectStore());
        assertEquals("my-bucket", l.bucket());
        assertEquals("data/sets/imagenet.fs", l.key());
        assertEquals("imagenet.fs", l.name());
        assertEquals("data/sets/imagenet.fs/manifest.txt", l.objectKey("manifest.txt"));
        assertEquals("s3://my-bucket/data/sets/imagenet.fs/p0", l.url("p0"));
        assertEquals("top.fs/p1", DatasetLocation.dataset("s3://b.example/top.fs/").objectKey("p1"));
    }

    @Test
    void treeInABucket() {
        assertEquals("raw/imagenet/", DatasetLocation.tree("s3://bkt/raw/imagenet/").key());
        assertEquals("raw/", DatasetLocation.tree("s3://bkt/raw").key());
        assertEquals("", DatasetLocation.tree("s3://bkt").key());
        assertEquals("", DatasetLocation.tree("s3://bkt/").key());
    }

    @Test
    void badFormsAreOneLine() {
        for (String bad : new String[] {"s3://", "s3:///x.fs", "s3://B/x.fs", "s3://bk/x.fs", "s3://bucket",
            "s3://bucket/", "s3://bucket/a//b.fs", "s3://bucket/../x.fs", "s3://bucket/data", "S3://bucket/x.fs",
            "gs://bucket/x.fs", "", "s3://bu_cket/x.fs"}) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> DatasetLocation.dataset(bad), bad);
            assertFalse(e.getMessage().contains("\n"), e.getMessage());
            assertTrue(bad.isEmpty() || e.getMessage().startsWith(bad), e.getMessage());
        }
    }
}
