package io.symmem.config;

import java.util.Optional;

/**
 * What the value of one variable may look like: {@link ConfigVariable} gives each variable a kind,
 * and every value is checked against it before anything starts, so that a malformed value is one line
 * naming its variable rather than whatever the code that reads it would make of it (a warning and
 * "false", a stack trace). Relations between variables (RANK &lt; WORLD_SIZE, ...) are
 * {@link SymmemConfigValidator}'s.
 *
 * <p>The set of kinds is closed so that tests can derive bad values for every variable from its kind.
 */
public sealed interface ValueKind
        permits IntegerKind, BooleanKind, DurationKind, SizeKind, ChoiceKind, HostKind, LocalAddressKind, PatternKind,
        PathKind, FilePathKind, NameListKind, ShmemSizeKind, TokenKind, EtcdStoreKind {

    /**
     * Empty when {@code value} (set, not blank) is acceptable. Otherwise why not, as a short phrase
     * that adds to what the variable allows ("more than 65535"), or "" when that says it all.
     */
    Optional<String> refusal(String value);
}
