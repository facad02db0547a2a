package io.symmem.cli;

import io.quarkus.runtime.Application;
import io.quarkus.runtime.PreventFurtherStepsException;
import io.quarkus.runtime.QuarkusBindException;
import io.quarkus.runtime.configuration.ConfigurationException;
import io.quarkus.runtime.util.ExceptionUtil;
import io.smallrye.config.ConfigValidationException;
import io.symmem.cli.common.ExitStatus;
import io.symmem.store.PortInUse;
import java.io.PrintStream;
import java.net.BindException;
import java.util.Map;
import java.util.Properties;
import java.util.function.BiConsumer;
import java.util.function.IntConsumer;
import org.jboss.logging.Logger;

/**
 * How the process ends once Quarkus has run or failed to start (the exit handler given to Quarkus.run).
 * A port that another process took after {@link PortCheck} found it free, a race no check before the
 * bind can close, ends as PortCheck's refusal does: one line naming the variable, the port and what to
 * do, exit status {@value ExitStatus#CONFIG}, no stack trace. Any other failure is reported as Quarkus
 * reports it without an exit handler (the message alone for a configuration error, else "Failed to
 * start application" with the stack trace), and the process ends with Quarkus's exit status.
 */
final class StartFailure implements BiConsumer<Integer, Throwable> {
    /** Linux's errno for "Address already in use" (Netty's message gives it negated). */
    private final Map<String, String> env;
    private final Properties properties;
    private final PrintStream err;
    private final IntConsumer exit;

    StartFailure(Map<String, String> env, Properties properties, PrintStream err, IntConsumer exit) {
        this.env = env;
        this.properties = properties;
        this.err = err;
        this.exit = exit;
    }

    static StartFailure ofProcess() {
        return new StartFailure(System.getenv(), System.getProperties(), System.err, System::exit);
    }

    @Override
    public void accept(Integer status, Throwable failure) {
        if (failure == null) {
            exit.accept(status);
            return;
        }
        Throwable root = ExceptionUtil.getRootCause(failure);
        Throwable bind = bindFailure(failure);
        if (bind != null) {
            err.println("symmem: " + (bind instanceof QuarkusBindException q
                    ? PortCheck.takenAtBind(env, properties, q.getHost(), q.getPort())
                    : PortCheck.takenAtBind(env, properties, null, 0)));
            exit.accept(ExitStatus.CONFIG);
            return;
        }
        if (root instanceof ConfigurationException || root instanceof ConfigValidationException) {
            err.println(root.getMessage());
        } else if (root instanceof PreventFurtherStepsException prevented) {
            if (prevented.getMessage() != null && !prevented.getMessage().isEmpty()) {
                err.println(prevented.getMessage());
            }
            exit.accept(prevented.getExitCode());
            return;
        } else {
            Logger.getLogger(Application.class).error("Failed to start application", failure);
        }
        exit.accept(status);
    }

    /** The server's failure to bind a port that is in use ({@link PortInUse}); null if none. */
    static Throwable bindFailure(Throwable failure) {
        return PortInUse.find(failure);
    }
}
