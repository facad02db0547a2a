package io.symmem.it;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Fields of a manifest that fabric8's model does not know: Jackson puts them in an object's additional
 * properties instead of failing, so a typo ("imagePullPolicyy") would pass a plain load. Walks the model's
 * getters (fabric8's classes only) and names each such field with its path, as `kubeconform -strict` would.
 */
final class UnknownFields {
    private static final String MODEL = "io.fabric8.kubernetes.api.model";

    private UnknownFields() {
    }

    /** "Kind name: .path: field" for every unknown field of {@code resource}. */
    static List<String> of(HasMetadata resource) {
        List<String> found = new ArrayList<>();
        walk(resource, "", resource.getKind() + " " + resource.getMetadata().getName(), found,
                java.util.Collections.newSetFromMap(new IdentityHashMap<>()));
        return found;
    }

    private static void walk(Object node, String path, String owner, List<String> found, Set<Object> seen) {
        if (node == null || !seen.add(node)) {
            return;
        }
        if (node instanceof Collection<?> items) {
            int i = 0;
            for (Object item : items) {
                walk(item, path + "[" + i++ + "]", owner, found, seen);
            }
            return;
        }
        if (node instanceof Map<?, ?> map) {
            map.forEach((key, value) -> walk(value, path + "." + key, owner, found, seen));
            return;
        }
        if (!node.getClass().getName().startsWith(MODEL)) {
            return;
        }
        for (Method getter : node.getClass().getMethods()) {
            if (getter.getParameterCount() != 0 || Modifier.isStatic(getter.getModifiers())
                    || !(getter.getName().startsWith("get") || getter.getName().startsWith("is"))
                    || getter.getName().equals("getClass")) {
                continue;
            }
            Object value;
            try {
                value = getter.invoke(node);
            } catch (ReflectiveOperationException | RuntimeException e) {
                continue;
            }
            if (getter.getName().equals("getAdditionalProperties")) {
                if (value instanceof Map<?, ?> extra && !extra.isEmpty()) {
                    for (Object key : new TreeSet<>(extra.keySet().stream().map(String::valueOf).toList())) {
                        found.add(owner + ": " + (path.isEmpty() ? "." : path) + ": " + key);
                    }
                }
                continue;
            }
            walk(value, path + "." + field(getter.getName()), owner, found, seen);
        }
    }

    private static String field(String getter) {
        String bare = getter.startsWith("is") ? getter.substring(2) : getter.substring(3);
        return Character.toLowerCase(bare.charAt(0)) + bare.substring(1);
    }
}
