package io.symmem.store;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import org.jboss.logging.Logger;

/**
 * One client connection on the server: decodes frames as they arrive and applies them to the shared
 * {@link StoreState}. Runs on the server's context only. A bad frame closes this connection and no
 * other: the offending peer is logged with its address.
 */
final class StoreServerConnection {

    private static final Logger LOG = Logger.getLogger(StoreServerConnection.class);

    private final NetSocket socket;
    private final StoreState state;
    private final StoreStatistics statistics;
    private final RequestDecoder decoder;
    private final String remote;
    private final FrameInput input = new FrameInput();
    private boolean validated;
    private boolean closing;

    StoreServerConnection(NetSocket socket, StoreState state, StoreStatistics statistics, StoreLimits limits) {
        this.socket = socket;
        this.state = state;
        this.statistics = statistics;
        this.decoder = new RequestDecoder(limits);
        this.remote = String.valueOf(socket.remoteAddress());
    }

    String remote() {
        return remote;
    }

    void onData(Buffer chunk) {
        if (closing) {
            return;
        }
        input.append(chunk);
        try {
            StoreRequest request;
            while (!closing && (request = decoder.next(input)) != null) {
                handle(request);
            }
        } catch (StoreProtocolException e) {
            reject(e.getMessage());
            return;
        }
        input.discardConsumed();
    }

    /** The socket closed (either side): its pending waits must not be answered any more. */
    void onClosed() {
        closing = true;
        state.cancelWaits(this);
    }

    void close() {
        closing = true;
        socket.close();
    }

    private void handle(StoreRequest request) {
        // TCPStore servers ignore everything until a connection has validated.
        if (!validated) {
            if (!(request instanceof StoreRequest.Validate validate)) {
                throw new StoreProtocolException("first frame was " + request.type() + " instead of VALIDATE");
            }
            if (validate.magic() != TcpStoreWire.VALIDATION_MAGIC) {
                throw new StoreProtocolException(String.format("VALIDATE carried 0x%08X instead of the magic number 0x%08X",
                        validate.magic(), TcpStoreWire.VALIDATION_MAGIC));
            }
            validated = true;
            statistics.served(QueryType.VALIDATE);
            return;
        }
        statistics.served(request.type());
        if (request instanceof StoreRequest.Set set) {
            state.set(set.key(), set.value());
        } else if (request instanceof StoreRequest.Get get) {
            socket.write(ResponseEncoder.value(state.get(get.key())));
        } else if (request instanceof StoreRequest.Add add) {
            socket.write(ResponseEncoder.int64(state.add(add.key(), add.delta())));
        } else if (request instanceof StoreRequest.Check check) {
            socket.write(ResponseEncoder.checkResult(state.containsAll(check.keys())));
        } else if (request instanceof StoreRequest.Wait wait) {
            boolean ready = state.awaitKeys(this, wait.keys(), () -> socket.write(ResponseEncoder.stopWaiting()));
            if (ready) {
                socket.write(ResponseEncoder.stopWaiting());
            }
        } else if (request instanceof StoreRequest.GetNumKeys) {
            socket.write(ResponseEncoder.int64(state.size()));
        } else if (request instanceof StoreRequest.DeleteKey delete) {
            socket.write(ResponseEncoder.int64(state.delete(delete.key()) ? 1 : 0));
        } else if (request instanceof StoreRequest.CancelWait) {
            state.cancelWaits(this);
            socket.write(ResponseEncoder.waitCanceled());
        } else if (request instanceof StoreRequest.Ping ping) {
            socket.write(ResponseEncoder.pong(ping.nonce()));
        } else if (request instanceof StoreRequest.CompareSet compareSet) {
            socket.write(ResponseEncoder.value(state.compareSet(compareSet.key(), compareSet.expected(), compareSet.desired())));
        } else if (request instanceof StoreRequest.Append append) {
            state.append(append.key(), append.value());
        } else if (request instanceof StoreRequest.MultiGet multiGet) {
            socket.write(ResponseEncoder.values(state.getAll(multiGet.keys())));
        } else if (request instanceof StoreRequest.MultiSet multiSet) {
            state.setAll(multiSet.keys(), multiSet.values());
        } else if (request instanceof StoreRequest.QueuePush push) {
            state.queuePush(push.key(), push.value());
        } else if (request instanceof StoreRequest.QueuePop pop) {
            StoreState.Popped popped = state.queuePop(pop.key());
            socket.write(ResponseEncoder.popped(popped.lengthBefore(), popped.value()));
        } else if (request instanceof StoreRequest.QueueLen len) {
            socket.write(ResponseEncoder.int64(state.queueLength(len.key())));
        } else if (request instanceof StoreRequest.ListKeys) {
            socket.write(ResponseEncoder.keys(state.keys()));
        } else if (request instanceof StoreRequest.Validate) {
            throw new StoreProtocolException("VALIDATE sent twice");
        } else {
            throw new StoreProtocolException("unhandled request " + request.type());
        }
    }

    private void reject(String reason) {
        LOG.warnf("store: closing connection from %s: %s", remote, reason);
        onClosed();
        socket.close();
    }
}
