package org.fanstore.runtime.output;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** A stand-in for the node side's staging files: object id to a real file the test wrote. */
public final class MapStaging implements OutputStaging {
    private final Map<Long, Path> files = new ConcurrentHashMap<>();
    private final List<String> open = new ArrayList<>();

    public void put(long objectId, Path file) {
        files.put(objectId, file);
    }

    public synchronized void stillOpen(String key) {
        open.add(key);
    }

    @Override
    public Path file(long objectId) {
        return files.get(objectId);
    }

    @Override
    public synchronized List<String> uncommitted() {
        return List.copyOf(open);
    }
}
