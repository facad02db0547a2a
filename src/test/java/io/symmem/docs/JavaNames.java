package io.symmem.docs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * The names the compiled io.symmem classes (main and test) answer to, read by reflection: each class
 * by its simple name and, when nested, also as Outer.Inner; each class's members (methods, fields,
 * enum constants, nested classes); and the public method names of every class, against which a
 * mention such as {@code world.group(...)} is resolved when the doc does not say the variable's type.
 */
final class JavaNames {
    private static final List<Path> CLASS_ROOTS = List.of(Path.of("target/classes"), Path.of("target/test-classes"));

    private final Map<String, Set<Class<?>>> bySimpleName = new HashMap<>();
    private final Set<String> qualifiedNames = new HashSet<>();
    private final Set<String> publicMethodNames = new HashSet<>();
    private final Set<String> constantNames = new HashSet<>();

    private JavaNames() {
    }

    static JavaNames compiled() {
        JavaNames names = new JavaNames();
        ClassLoader loader = JavaNames.class.getClassLoader();
        for (Path root : CLASS_ROOTS) {
            for (String binaryName : classFiles(root)) {
                try {
                    names.add(Class.forName(binaryName, false, loader));
                } catch (ClassNotFoundException | LinkageError unloadable) {
                    // A class whose dependencies are not on the test class path has no name a doc can use.
                }
            }
        }
        if (names.bySimpleName.isEmpty()) {
            throw new IllegalStateException("no io.symmem classes under " + CLASS_ROOTS + ": compile first");
        }
        return names;
    }

    private static List<String> classFiles(Path root) {
        Path base = root.resolve("io/symmem");
        if (!Files.isDirectory(base)) {
            return List.of();
        }
        try (Stream<Path> files = Files.walk(base)) {
            return files.map(p -> root.relativize(p).toString())
                    .filter(p -> p.endsWith(".class") && !p.endsWith("package-info.class") && !p.endsWith("module-info.class"))
                    .map(p -> p.substring(0, p.length() - ".class".length()).replace('/', '.'))
                    .toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void add(Class<?> c) {
        if (c.isAnonymousClass() || c.isLocalClass() || c.isSynthetic()) {
            return;
        }
        qualifiedNames.add(c.getName().replace('$', '.'));
        bySimpleName.computeIfAbsent(c.getSimpleName(), k -> new HashSet<>()).add(c);
        if (c.getEnclosingClass() != null) {
            String nested = c.getName().substring(c.getName().lastIndexOf('.') + 1).replace('$', '.');
            bySimpleName.computeIfAbsent(nested, k -> new HashSet<>()).add(c);
        }
        try {
            for (Method m : c.getMethods()) {
                publicMethodNames.add(m.getName());
            }
            for (Field f : c.getDeclaredFields()) {
                if (f.isEnumConstant() || (Modifier.isStatic(f.getModifiers()) && Modifier.isFinal(f.getModifiers()))) {
                    constantNames.add(f.getName());
                }
            }
        } catch (LinkageError unresolvable) {
            // Members whose types cannot load are not listed; the class's name still is.
        }
    }

    /** A class by its simple name or Outer.Inner. */
    boolean isClass(String name) {
        return bySimpleName.containsKey(name);
    }

    /** A class by its fully qualified name (nested ones with '.'). */
    boolean isQualifiedClass(String name) {
        return qualifiedNames.contains(name);
    }

    /** {@code member} is a method, field, enum constant or nested class of some class called {@code type}. */
    boolean hasMember(String type, String member) {
        for (Class<?> c : bySimpleName.getOrDefault(type, Set.of())) {
            if (declares(c, member)) {
                return true;
            }
        }
        return false;
    }

    private static boolean declares(Class<?> c, String member) {
        try {
            for (Class<?> k = c; k != null; k = k.getSuperclass()) {
                if (Stream.of(k.getDeclaredMethods()).anyMatch(m -> m.getName().equals(member))
                        || Stream.of(k.getDeclaredFields()).anyMatch(f -> f.getName().equals(member))
                        || Stream.of(k.getDeclaredClasses()).anyMatch(n -> n.getSimpleName().equals(member))) {
                    return true;
                }
            }
            return Stream.of(c.getMethods()).anyMatch(m -> m.getName().equals(member));
        } catch (LinkageError unresolvable) {
            return false;
        }
    }

    /** Some io.symmem class has a public method of this name. */
    boolean isPublicMethod(String name) {
        return publicMethodNames.contains(name);
    }

    /** An enum constant or static final field of some io.symmem class (e.g. Algorithm's TWO_SHOT_CE). */
    boolean isConstant(String name) {
        return constantNames.contains(name);
    }
}
