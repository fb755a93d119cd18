package org.fanstore.runtime.output;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** A stand-in for the node side's published outputs: object id to a real file the test wrote. */
public final class MapStaging implements HeldOutputs {
    private final Map<Long, Path> files = new ConcurrentHashMap<>();

    public void put(long objectId, Path file) {
        files.put(objectId, file);
    }

    @Override
    public Path file(long objectId) {
        return files.get(objectId);
    }
}
