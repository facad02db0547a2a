package io.symmem.memory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * What a rank tells its peers before a buffer rendezvous: the size it asks for, the machine it runs
 * on, its backend and the name of its fd channel. Encoded compactly for the store.
 */
record PeerDescriptor(long sizeBytes, String hostId, String backend, String channelName) {

    byte[] encode() {
        String text = sizeBytes + "\n" + hostId + "\n" + backend + "\n" + channelName;
        return text.getBytes(StandardCharsets.UTF_8);
    }

    static PeerDescriptor decode(byte[] bytes, int rank) {
        String[] parts = new String(bytes, StandardCharsets.UTF_8).split("\n", -1);
        if (parts.length != 4) {
            throw new RendezvousException("rank " + rank + " sent a malformed buffer descriptor ("
                    + ByteBuffer.wrap(bytes).remaining() + " bytes)");
        }
        return new PeerDescriptor(Long.parseLong(parts[0]), parts[1], parts[2], parts[3]);
    }
}
