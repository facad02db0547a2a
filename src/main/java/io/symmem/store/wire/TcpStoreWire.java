package io.symmem.store.wire;

/** Constants of the TCPStore wire protocol that are not query types. */
public final class TcpStoreWire {

    /** Sent with VALIDATE as the first frame of every connection (uint32, little-endian). */
    public static final int VALIDATION_MAGIC = 0x3C85F7CE;

    /** CHECK answers (one byte). */
    static final int CHECK_READY = 0;
    static final int CHECK_NOT_READY = 1;

    /** WAIT / CANCEL_WAIT answers (one byte). */
    public static final int WAIT_STOP_WAITING = 0;
    public static final int WAIT_CANCELED = 1;

    /**
     * TCPStore clients put "/" in front of every user key on the wire; we do the same so that a
     * Python rank and a Java rank talking to one server see the same keys.
     */
    static final String KEY_PREFIX = "/";

    private TcpStoreWire() {}
}
