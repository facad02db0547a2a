package io.symmem;

import java.util.logging.ConsoleHandler;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.Logger;

/**
 * Logging of a plain Java program (no Quarkus). The jar brings the JBoss LogManager, whose
 * System.LoggerFinder serves every {@code System.getLogger} of the process (the JDK's own classes
 * included) and complains on stderr ("The LogManager accessed before the java.util.logging.manager
 * system property was set ...") when java.util.logging runs on another manager. So, unless the
 * program chose a manager itself, the JBoss LogManager becomes java.util.logging's manager, as under
 * Quarkus, with the JDK's console handler on the root (INFO and above, on stderr) in place of the
 * handler Quarkus leaves there to hold records until it configures logging, which a plain program
 * never does. Under Quarkus the manager is set before any of this runs, and nothing changes.
 */
final class PlainJavaLogging {
    static final String MANAGER_PROPERTY = "java.util.logging.manager";
    static final String JBOSS_MANAGER = "org.jboss.logmanager.LogManager";
    private static boolean chosen;

    private PlainJavaLogging() {
    }

    /** Called by the entry points of {@link Symmem}, before the library's first class that logs. */
    static synchronized void choose() {
        if (chosen) {
            return;
        }
        chosen = true;
        if (System.getProperty(MANAGER_PROPERTY) != null || !present(JBOSS_MANAGER)) {
            return;
        }
        System.setProperty(MANAGER_PROPERTY, JBOSS_MANAGER);
        LogManager manager = LogManager.getLogManager();
        if (!manager.getClass().getName().equals(JBOSS_MANAGER)) {
            return;  // java.util.logging was in use before: it keeps the manager it started with
        }
        Logger root = manager.getLogger("");
        for (Handler h : root.getHandlers()) {
            if (h.getClass().getName().endsWith(".QuarkusDelayedHandler")) {
                root.removeHandler(h);
            }
        }
        if (root.getHandlers().length == 0) {
            root.setLevel(Level.INFO);
            root.addHandler(new ConsoleHandler());
        }
        // Netty warns, with a stack trace, about a connection that reaches a server Vert.x is closing (the
        // store at the end of a run, while a peer's last connection comes in); the connection is dropped,
        // which is all a closing server can do. Only its errors are shown.
        acceptWarnings = manager.getLogger("io.netty.bootstrap.ServerBootstrap");
        acceptWarnings.setLevel(Level.SEVERE);
    }

    /** Held: a logger whose level was set must not be collected, or the level goes with it. */
    private static Logger acceptWarnings;

    private static boolean present(String className) {
        try {
            Class.forName(className, false, PlainJavaLogging.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }
}
