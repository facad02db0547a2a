package io.symmem.config;

import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A secret bearer token (RFC 6750's token68 characters) of {@code minLength} to {@code maxLength}
 * characters. A refusal says what is wrong without quoting any part of the value.
 */
public record TokenKind(int minLength, int maxLength) implements ValueKind {
    private static final Pattern TOKEN68 = Pattern.compile("[A-Za-z0-9._~+/-]+=*");

    @Override
    public Optional<String> refusal(String value) {
        if (value.length() < minLength) {
            return Optional.of("it has " + value.length() + " characters: too short to be guessed at");
        }
        if (value.length() > maxLength) {
            return Optional.of("it has " + value.length() + " characters");
        }
        return TOKEN68.matcher(value).matches() ? Optional.empty() : Optional.of("it has other characters");
    }
}
