package io.symmem.config;

import java.util.Optional;

/** A byte size between {@code min} and {@code max}, in {@link ByteSize}'s forms ("4096", "64MiB", "1MB"). */
public record SizeKind(long min, long max) implements ValueKind {
    @Override
    public Optional<String> refusal(String value) {
        try {
            ByteSize.parse(value, min, max);
            return Optional.empty();
        } catch (ByteSize.InvalidSizeException e) {
            return Optional.of(e.reason());
        }
    }
}
