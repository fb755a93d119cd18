package org.fanstore.launcher;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;

/**
 * Turns picocli's complaint about a command line into the one line a user needs. picocli reports the first
 * problem it checks, which is not always the real one: a misspelt required option ("--imput") shows up as a
 * missing "--input", and a command without "--" in front of it fails on the command's own options.
 */
final class ArgumentAdvice {
    private static final int MAX_DISTANCE = 2;

    private ArgumentAdvice() {
    }

    /** The message for ex, given the whole command line args. */
    static String explain(final ParameterException ex, final String[] args) {
        final CommandLine cl = ex.getCommandLine();
        final CommandSpec spec = cl.getCommandSpec();
        final List<String> mine = argsOf(spec, args);
        if (!spec.subcommands().isEmpty() && spec.parent() == null) {
            for (final String a : mine) {
                if (!a.startsWith("-") && !spec.subcommands().containsKey(a)) {
                    return "unknown command '" + a + "'" + suggestion(a, spec.subcommands().keySet()) +
                        "; the commands are " + String.join(", ", spec.subcommands().keySet());
                }
            }
        }
        final boolean run = spec.name().equals("run");
        for (final String a : mine) {
            if (a.equals("--")) {
                break;
            }
            final String name = a.contains("=") ? a.substring(0, a.indexOf('=')) : a;
            if (name.startsWith("-") && name.length() > 1 && spec.findOption(name) == null) {
                if (run && !name.startsWith("--")) {
                    return "unknown option '" + name + "': put '--' before the command to run, as in 'fanstore run" +
                        " --data OUT.fs -- python3 -c ...'";
                }
                return "unknown option '" + name + "'" + suggestion(name, spec.optionsMap().keySet());
            }
        }
        if (run && !List.of(args).contains("--") && ex instanceof CommandLine.UnmatchedArgumentException) {
            return ex.getMessage() + ": put '--' before the command to run";
        }
        return ex.getMessage();
    }

    /** The arguments that belong to spec's command: after its own name (the root: all of them). */
    private static List<String> argsOf(final CommandSpec spec, final String[] args) {
        final List<String> out = new ArrayList<>(List.of(args));
        if (spec.parent() != null) {
            final int at = out.indexOf(spec.name());
            return at < 0 ? out : out.subList(at + 1, out.size());
        }
        return out;
    }

    private static String suggestion(final String typed, final Set<String> known) {
        String best = null;
        int bestDistance = MAX_DISTANCE + 1;
        for (final String k : known) {
            final int d = distance(typed, k);
            if (d < bestDistance) {
                best = k;
                bestDistance = d;
            }
        }
        return best == null ? "" : " (did you mean '" + best + "'?)";
    }

    /** Levenshtein distance: a typo is one or two edits away. */
    static int distance(final String a, final String b) {
        int[] prev = new int[b.length() + 1];
        int[] cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            prev[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                final int cost = a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1;
                cur[j] = Math.min(Math.min(cur[j - 1] + 1, prev[j] + 1), prev[j - 1] + cost);
            }
            final int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }
}
