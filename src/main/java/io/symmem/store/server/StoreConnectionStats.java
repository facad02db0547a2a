package io.symmem.store.server;

/**
 * One TCP connection of the store server as the server sees it, for diagnostics and tests (see
 * {@link StoreServer#connectionStats()}).
 *
 * @param remote the peer's address
 * @param answerBytesQueued answer bytes encoded for it that its socket has not taken yet (memory held for it)
 * @param answerBytesUnsent all answer bytes not sent yet: queued, plus answers not encoded yet (they reference store values)
 * @param requestBytesHeld wire bytes of requests read from it but not applied yet
 * @param backedUp its unsent answers reached the soft bound: its requests with an answer wait
 * @param readingPaused the server does not read from it now
 */
public record StoreConnectionStats(String remote, long answerBytesQueued, long answerBytesUnsent, long requestBytesHeld,
                                   boolean backedUp, boolean readingPaused) {}
