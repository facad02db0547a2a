package io.symmem.store;

import java.util.regex.Pattern;

/**
 * What a group may be called. A group's name becomes part of store keys ('/' separates their parts),
 * of NCCL communicator names and of error messages, so it is checked where the group is made rather
 * than where one of those first chokes on it.
 */
public final class GroupNames {
    /** The group of every rank of the world: made by the world itself, never by a user. */
    public static final String WORLD = "world";
    public static final int MAX_LENGTH = 64;
    private static final Pattern ALLOWED = Pattern.compile("[A-Za-z0-9._-]{1," + MAX_LENGTH + "}");

    private GroupNames() {
    }

    /** Refuses, naming what is wrong, a name no group may have (WORLD included: it is taken). */
    public static void check(String name) {
        if (name == null) {
            throw new IllegalArgumentException("group name must not be null");
        }
        if (!ALLOWED.matcher(name).matches()) {
            throw new IllegalArgumentException("group name '" + name + "' is not allowed: use 1 to " + MAX_LENGTH
                    + " letters, digits, '.', '_' or '-'" + offending(name));
        }
        if (name.equals(WORLD)) {
            throw new IllegalArgumentException("group name '" + name + "' is taken by the group of every rank "
                    + "(world.group()); choose another name");
        }
    }

    private static String offending(String name) {
        if (name.isEmpty()) {
            return " (it is empty)";
        }
        if (name.length() > MAX_LENGTH) {
            return " (it has " + name.length() + " characters)";
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (!(Character.isLetterOrDigit(c) && c < 128) && c != '.' && c != '_' && c != '-') {
                return " ('" + c + "' at position " + i + ")";
            }
        }
        return "";
    }
}
