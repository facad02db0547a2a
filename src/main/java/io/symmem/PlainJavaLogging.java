package io.symmem;

/**
 * The library logs through JBoss Logging. Outside Quarkus nothing sets java.util.logging.manager, and
 * JBoss Logging would then pick the JBoss LogManager it finds on the class path, which complains on
 * stderr that the LogManager was accessed before that property was set. A plain Java program gets the
 * JDK's own logging instead (java.util.logging, configured as the program likes). Quarkus sets the
 * manager before any of this runs, and an explicit org.jboss.logging.provider always wins.
 */
final class PlainJavaLogging {
    static final String PROVIDER = "org.jboss.logging.provider";

    private PlainJavaLogging() {
    }

    /** Called before the library's first class that logs is loaded (the entry points of Symmem). */
    static void choose() {
        if (System.getProperty("java.util.logging.manager") == null && System.getProperty(PROVIDER) == null) {
            System.setProperty(PROVIDER, "jdk");
        }
    }
}
