package org.fanstore.prep.store;

/** Run in a child JVM with an empty environment: prints the reason and line fromEnvironment() fails with. */
public final class NoCredentialsMain {
    private NoCredentialsMain() {
    }

    public static void main(String[] args) {
        try (ObjectStore s = ObjectStore.fromEnvironment()) {
            System.out.println("connected (unexpected) to " + s.endpoint());
        } catch (StoreException e) {
            System.out.println(e.reason() + ": " + e.getMessage());
        }
    }
}
