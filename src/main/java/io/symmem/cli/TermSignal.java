package io.symmem.cli;

import java.lang.reflect.Proxy;

/**
 * Installs a SIGTERM handler through {@code sun.misc.Signal}, the JDK's only way to handle a signal.
 * It is reached by reflection because javac warns at every compile that {@code sun.misc} is internal
 * API, and has no option that silences exactly that warning.
 */
final class TermSignal {
    private TermSignal() {
    }

    static void onTerm(Runnable action) {
        try {
            Class<?> signal = Class.forName("sun.misc.Signal");
            Class<?> handlerType = Class.forName("sun.misc.SignalHandler");
            Object term = signal.getConstructor(String.class).newInstance("TERM");
            Object handler = Proxy.newProxyInstance(handlerType.getClassLoader(), new Class<?>[] {handlerType},
                    (self, method, args) -> switch (method.getName()) {
                        case "handle" -> {
                            action.run();
                            yield null;
                        }
                        case "hashCode" -> System.identityHashCode(self);
                        case "equals" -> self == args[0];
                        default -> "symmem's SIGTERM handler";
                    });
            signal.getMethod("handle", signal, handlerType).invoke(null, term, handler);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("symmem: cannot install the SIGTERM handler: " + e, e);
        }
    }
}
