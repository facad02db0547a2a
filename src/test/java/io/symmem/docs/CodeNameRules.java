package io.symmem.docs;

import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What counts as a code name in backticks, and whether it resolves. A span counts only when all of it
 * has one of these shapes (anything else, such as a command, a path, JSON or a value, is prose):
 * <ul>
 * <li>Java, fully qualified: {@code io.symmem.world.SymmemWorld}: must be a class.
 * <li>Java, a type and a member: {@code SymmemWorld.formAgain()}, {@code Algorithm.TWO_SHOT_CE},
 * {@code NativeException.Aborted}, {@code TcpStoreClient.Options.forSymmemServer()}: the whole may be a
 * nested class; else the part before the last dot must be a class with that method, field, constant or
 * nested class. File names ({@code Foo.java}) are not members.
 * <li>Java, a lone type of two humps or more: {@code SymmemWorld}, {@code NativeAbortedException}
 * (one-word names such as {@code Store} or {@code Timeout} are also plain words, so are not checked):
 * a Java class, or a C++ class or struct of the native core.
 * <li>Java, a variable and a call: {@code world.group(...)}, {@code memory.newStream()}: the doc does not
 * say the variable's type, so the method must be a public method of some io.symmem class.
 * <li>C: a span that starts with {@code symmem_}: a name of the public headers (a trailing {@code *}
 * is a prefix of some), a program the native build makes, or a metric's Prometheus name.
 * <li>Environment variable: UPPER_CASE with an underscore, alone or as {@code NAME=value}; a constant
 * of the headers or of a Java class, or a foreign constant, is not one.
 * </ul>
 */
final class CodeNameRules {
    private static final String TYPE = "[A-Z][a-z0-9]\\w*";
    static final Pattern QUALIFIED = Pattern.compile("io\\.symmem(?:\\.[a-z]\\w*)*\\.[A-Z]\\w*(?:\\.[A-Z]\\w*)*");
    static final Pattern TYPE_MEMBER = Pattern.compile("(" + TYPE + "(?:\\." + TYPE + ")*)\\.([A-Za-z_]\\w*)(?:\\(.*\\))?");
    static final Pattern LONE_TYPE = Pattern.compile("[A-Z][a-z0-9]+(?:[A-Z]+[a-z0-9]+)+[A-Z]*");
    static final Pattern VARIABLE_CALL = Pattern.compile("[a-z][a-zA-Z0-9]*\\.([a-z][a-zA-Z0-9]*)\\(.*\\)");
    static final Pattern C_NAME = Pattern.compile("(symmem_[a-z0-9_]*?)(\\*)?(?:[ (/{].*)?");
    static final Pattern VARIABLE = Pattern.compile("\\$?([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?:=\\S*)?");
    private static final Set<String> FILE_EXTENSIONS = Set.of("java", "class", "md", "py", "sh", "xml", "json", "yaml",
            "yml", "properties", "txt", "h", "cpp", "cu", "so", "jar", "log");

    private final JavaNames java;
    private final NativeNames natives;

    CodeNameRules(JavaNames java, NativeNames natives) {
        this.java = java;
        this.natives = natives;
    }

    /** Why a Java-shaped span does not resolve; empty when it resolves or is not a Java name. */
    Optional<String> javaProblem(String text) {
        if (QUALIFIED.matcher(text).matches()) {
            return java.isQualifiedClass(text) ? Optional.empty() : Optional.of("no such class");
        }
        Matcher member = TYPE_MEMBER.matcher(text);
        if (member.matches()) {
            return typeAndMember(text, member.group(1), member.group(2));
        }
        if (LONE_TYPE.matcher(text).matches()) {
            return java.isClass(text) || natives.isCppType(text) || ForeignNames.CLASSES.contains(text) ? Optional.empty()
                    : Optional.of("no such class");
        }
        Matcher call = VARIABLE_CALL.matcher(text);
        if (call.matches()) {
            return java.isPublicMethod(call.group(1)) ? Optional.empty()
                    : Optional.of("no io.symmem class has a public method " + call.group(1));
        }
        return Optional.empty();
    }

    private Optional<String> typeAndMember(String text, String type, String member) {
        if (FILE_EXTENSIONS.contains(member) || java.isClass(text)) {
            return Optional.empty();
        }
        String outer = type.contains(".") ? type.substring(0, type.indexOf('.')) : type;
        if (ForeignNames.CLASSES.contains(outer)) {
            return Optional.empty();
        }
        if (!java.isClass(type)) {
            // A C++ type of the core (DeviceBuffer.ordered): its members are not read here.
            return natives.isCppType(type) ? Optional.empty() : Optional.of("no such class " + type);
        }
        return java.hasMember(type, member) ? Optional.empty() : Optional.of(type + " has no member " + member);
    }

    /** Why a span that starts with symmem_ names nothing of the native build; empty when it does or is not one. */
    Optional<String> cProblem(String text) {
        Matcher c = C_NAME.matcher(text);
        if (!c.matches()) {
            return Optional.empty();
        }
        String name = c.group(1);
        boolean known = c.group(2) != null ? natives.isHeaderPrefix(name)
                : natives.isHeaderName(name) || natives.isProgram(name) || natives.isMetric(name);
        return known ? Optional.empty()
                : Optional.of("not in src/native-cuda/include, nor a program of the native build, nor a metric");
    }

    /**
     * Why a variable-shaped span is not in the reference; empty when it is, or is a constant, or is a
     * foreign variable, or a variable of the project's tooling ({@code isTooling}).
     */
    Optional<String> variableProblem(String text, Set<String> reference, Predicate<String> isTooling) {
        Matcher v = VARIABLE.matcher(text);
        if (!v.matches()) {
            return Optional.empty();
        }
        String name = v.group(1);
        if (reference.contains(name) || ForeignNames.VARIABLES.contains(name) || isConstant(name) || isTooling.test(name)) {
            return Optional.empty();
        }
        return Optional.of(name + " is not in docs/configuration.md");
    }

    /** The variable name of a variable-shaped span, for callers that report it. */
    static Optional<String> variableName(String text) {
        Matcher v = VARIABLE.matcher(text);
        return v.matches() ? Optional.of(v.group(1)) : Optional.empty();
    }

    private boolean isConstant(String name) {
        return natives.isHeaderName(name) || java.isConstant(name)
                || ForeignNames.CONSTANTS.contains(name) || ForeignNames.CONSTANT_PREFIXES.stream().anyMatch(name::startsWith);
    }
}
