package io.symmem.cli;

import picocli.CommandLine;
import picocli.CommandLine.IParameterExceptionHandler;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.TypeConversionException;

/**
 * A value an option cannot take ends the command with one line naming the option, e.g.
 * {@code symmem demo: --sizes: '1XB' is not a size: use ...}, and exit status 2 (picocli's usage
 * error), instead of picocli's "Invalid value for option" followed by the whole usage text, in which
 * the reason is easily lost. Every other command-line mistake keeps picocli's own handling.
 */
final class OptionErrorHandler implements IParameterExceptionHandler {
    private final IParameterExceptionHandler others;

    OptionErrorHandler(IParameterExceptionHandler others) {
        this.others = others;
    }

    @Override
    public int handleParseException(ParameterException e, String[] args) throws Exception {
        if (e.getCause() instanceof TypeConversionException conversion && e.getArgSpec() instanceof OptionSpec option) {
            CommandLine command = e.getCommandLine();
            command.getErr().println(command.getCommandSpec().qualifiedName() + ": " + option.longestName() + ": "
                    + conversion.getMessage());
            command.getErr().flush();
            return CommandLine.ExitCode.USAGE;
        }
        return others.handleParseException(e, args);
    }
}
