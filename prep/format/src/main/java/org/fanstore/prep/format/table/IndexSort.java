package org.fanstore.prep.format.table;

import java.util.function.IntBinaryOperator;

/**
 * Sorts the indices 0..n-1 by a comparator over indices: a bottom-up merge sort over two int arrays (8 bytes per
 * entry), in place of sorting an array of objects. Runs already in order are not merged again, so a namespace that
 * arrives nearly sorted (prep's partitions hold their files in path order) costs little more than one pass.
 * Prep's partition plan sorts its files by size with it too.
 */
public final class IndexSort {
    private static final int INSERTION_RUN = 32;

    private IndexSort() {
    }

    /** The permutation p with {@code p[k]} the index of the k-th smallest element (ties keep index order). */
    public static int[] sort(final int n, final IntBinaryOperator compare) {
        int[] a = new int[n];
        for (int i = 0; i < n; i++) {
            a[i] = i;
        }
        for (int from = 0; from < n; from += INSERTION_RUN) {
            final int to = Math.min(n, from + INSERTION_RUN);
            for (int i = from + 1; i < to; i++) {
                final int v = a[i];
                int j = i - 1;
                while (j >= from && compare.applyAsInt(a[j], v) > 0) {
                    a[j + 1] = a[j];
                    j--;
                }
                a[j + 1] = v;
            }
        }
        if (n <= INSERTION_RUN) {
            return a;
        }
        int[] b = new int[n];
        for (int width = INSERTION_RUN; width < n; width *= 2) {
            for (int lo = 0; lo < n; lo += 2 * width) {
                final int mid = Math.min(n, lo + width);
                final int hi = Math.min(n, lo + 2 * width);
                if (mid == hi || compare.applyAsInt(a[mid - 1], a[mid]) <= 0) {
                    System.arraycopy(a, lo, b, lo, hi - lo);
                } else {
                    merge(a, b, lo, mid, hi, compare);
                }
            }
            final int[] t = a;
            a = b;
            b = t;
        }
        return a;
    }

    private static void merge(final int[] a, final int[] b, final int lo, final int mid, final int hi,
        final IntBinaryOperator compare) {
        int i = lo;
        int j = mid;
        for (int k = lo; k < hi; k++) {
            if (j == hi || (i < mid && compare.applyAsInt(a[i], a[j]) <= 0)) {
                b[k] = a[i++];
            } else {
                b[k] = a[j++];
            }
        }
    }
}
