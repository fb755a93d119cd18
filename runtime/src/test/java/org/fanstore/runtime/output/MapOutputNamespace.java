package org.fanstore.runtime.output;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * A stand-in for the node side's OutputNamespace (branch w-local), for the cluster-side tests: an in-memory
 * map with the check rules the contract documents. Replace by the real class when both sides are merged.
 */
public final class MapOutputNamespace implements OutputNamespace {
    public static final int ENOENT = 2;
    public static final int EEXIST = 17;
    public static final int ENOTDIR = 20;
    public static final int EISDIR = 21;
    public static final int EROFS = 30;
    public static final int ENOTEMPTY = 39;

    private final Map<String, OutputRecord> entries = new ConcurrentSkipListMap<>();
    private final Set<String> inputs;

    public MapOutputNamespace(Set<String> inputs) {
        this.inputs = inputs;
    }

    @Override
    public synchronized int check(OutputRecord r) {
        String key = text(r.key());
        OutputRecord present = entries.get(key);
        switch (r.kind()) {
            case FILE, DIR -> {
                if (inputs.contains(key)) {
                    return EROFS;
                }
                if (!parentIsDir(key)) {
                    return ENOENT;
                }
                if (present != null && (r.exclusive() || r.kind() == OutputRecord.Kind.DIR)) {
                    return EEXIST;
                }
                return present != null && present.kind() == OutputRecord.Kind.DIR ? EISDIR : 0;
            }
            case UNLINK -> {
                return inputs.contains(key) ? EROFS : present == null ? ENOENT
                        : present.kind() == OutputRecord.Kind.DIR ? EISDIR : 0;
            }
            case RMDIR -> {
                if (present == null) {
                    return inputs.contains(key) ? EROFS : ENOENT;
                }
                if (present.kind() != OutputRecord.Kind.DIR) {
                    return ENOTDIR;
                }
                return entries.keySet().stream().anyMatch(k -> k.startsWith(key + "/")) ? ENOTEMPTY : 0;
            }
            case RENAME -> {
                String target = text(r.target());
                if (inputs.contains(key) || inputs.contains(target)) {
                    return EROFS;
                }
                return present == null || !parentIsDir(target) ? ENOENT : 0;
            }
            default -> throw new IllegalArgumentException(r.toString());
        }
    }

    @Override
    public synchronized void apply(OutputRecord r) {
        String key = text(r.key());
        switch (r.kind()) {
            case FILE, DIR -> entries.put(key, r);
            case UNLINK, RMDIR -> entries.remove(key);
            case RENAME -> {
                OutputRecord moved = entries.remove(key);
                if (moved != null) {
                    entries.put(text(r.target()), new OutputRecord(moved.kind(), r.target(), null, moved.size(),
                            moved.mode(), moved.mtimeNanos(), moved.holderRank(), moved.objectId(), false));
                }
            }
            default -> throw new IllegalArgumentException(r.toString());
        }
    }

    @Override
    public Optional<OutputRecord> lookup(byte[] key) {
        return Optional.ofNullable(entries.get(text(key)));
    }

    /** Every committed record, by key. */
    public Map<String, OutputRecord> snapshot() {
        return Map.copyOf(entries);
    }

    private boolean parentIsDir(String key) {
        int slash = key.lastIndexOf('/');
        if (slash < 0) {
            return true;
        }
        OutputRecord parent = entries.get(key.substring(0, slash));
        return parent != null && parent.kind() == OutputRecord.Kind.DIR;
    }

    private static String text(byte[] b) {
        return new String(b, UTF_8);
    }

    /** Records for the tests. */
    public static OutputRecord file(String key, long size, int holder, long objectId, boolean exclusive) {
        return new OutputRecord(OutputRecord.Kind.FILE, key.getBytes(UTF_8), null, size, 0100644, 0, holder,
                objectId, exclusive);
    }

    public static OutputRecord dir(String key) {
        return new OutputRecord(OutputRecord.Kind.DIR, key.getBytes(UTF_8), null, 0, 040755, 0, -1, 0, false);
    }

    public static OutputRecord unlink(String key) {
        return new OutputRecord(OutputRecord.Kind.UNLINK, key.getBytes(UTF_8), null, 0, 0, 0, -1, 0, false);
    }

    public static OutputRecord rename(String from, String to, int holder, long objectId) {
        return new OutputRecord(OutputRecord.Kind.RENAME, from.getBytes(UTF_8), to.getBytes(UTF_8), 0, 0, 0, holder,
                objectId, false);
    }
}
