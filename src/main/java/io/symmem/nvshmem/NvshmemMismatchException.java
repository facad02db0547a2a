package io.symmem.nvshmem;

/** Ranks disagree on a call that NVSHMEM makes collective over every PE; the message names them. */
public class NvshmemMismatchException extends RuntimeException {
    public NvshmemMismatchException(String message) {
        super(message);
    }
}
