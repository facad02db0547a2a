package io.symmem.store.wire;

/**
 * What QUEUE_POP answers: the length of the queue before the pop, and the oldest value (null when
 * the queue was empty).
 */
public record Popped(long lengthBefore, byte[] value) {}
