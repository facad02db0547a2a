package io.symmem.store;

import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.NetSocket;
import java.util.ArrayDeque;
import java.util.Iterator;
import org.jboss.logging.Logger;

/**
 * One client connection on the server. Runs on the server's context only.
 *
 * <p>Bytes are decoded into a queue of requests as they arrive ({@link #onData}); the server's
 * {@link StoreServer.Scheduler} applies the queued requests of all connections once per read batch,
 * so that requests of different connections read in the same batch are applied in a safe order (see
 * {@link StoreServer}). Within one connection requests are applied strictly in arrival order, with two
 * exceptions while one of its WAITs is pending: requests without an answer (SET, APPEND, MULTI_SET,
 * QUEUE_PUSH) are applied at once (a set on this connection must be able to release its own wait), and
 * CANCEL_WAIT is handled at once (it answers WAIT_CANCELED in the wait's place). Everything else that
 * expects an answer is held back behind the pending WAIT, so answers leave in request order and a
 * client may pipeline WAIT and GET in one write.
 *
 * <p>A bad frame closes this connection and no other: the offending peer is logged with its address.
 */
final class StoreServerConnection {

    private static final Logger LOG = Logger.getLogger(StoreServerConnection.class);

    private final NetSocket socket;
    private final StoreState state;
    private final StoreStatistics statistics;
    private final StoreServer.Scheduler scheduler;
    private final StoreMembers members;
    private final RequestDecoder decoder;
    private final String remote;
    private final FrameInput input = new FrameInput();
    /** Decoded, not yet applied, in arrival order. */
    private final ArrayDeque<StoreRequest> pending = new ArrayDeque<>();
    /** Answers produced during one scheduler pass, written in one go at its end. */
    private Buffer out;
    private boolean validated;
    private boolean closing;
    /** onClosed ran: waits dropped and member keys released (once, whichever close came first). */
    private boolean released;
    /** One of this connection's WAITs is registered and unanswered: answered requests are held back. */
    private boolean waiting;
    /** Why a frame could not be decoded; the connection is closed once the requests before it are applied. */
    private String broken;
    /** Already in the scheduler's list of connections with work. */
    boolean scheduled;

    StoreServerConnection(NetSocket socket, StoreState state, StoreMembers members, StoreStatistics statistics,
                          StoreLimits limits, StoreServer.Scheduler scheduler) {
        this.socket = socket;
        this.state = state;
        this.members = members;
        this.statistics = statistics;
        this.scheduler = scheduler;
        this.decoder = new RequestDecoder(limits);
        this.remote = String.valueOf(socket.remoteAddress());
    }

    String remote() {
        return remote;
    }

    /** Decodes what arrived; applying is left to the scheduler's pass after this read batch. */
    void onData(Buffer chunk) {
        if (closing || broken != null) {
            return;
        }
        input.append(chunk);
        try {
            StoreRequest request;
            while ((request = decoder.next(input)) != null) {
                pending.addLast(request);
            }
        } catch (StoreProtocolException e) {
            broken = e.getMessage();
        }
        input.discardConsumed();
        scheduler.schedule(this);
    }

    /** The socket closed (either side): its pending waits must not be answered any more. */
    void onClosed() {
        if (released) {
            return;
        }
        released = true;
        closing = true;
        pending.clear();
        state.cancelWaits(this);
        members.onClosed(this, remote);
    }

    void close() {
        closing = true;
        socket.close();
    }

    boolean hasWork() {
        return !closing && (!pending.isEmpty() || broken != null);
    }

    /**
     * Phase 1 of a pass: applies the requests without an answer that may run now: the leading ones;
     * while a WAIT is pending, every one queued (and a CANCEL_WAIT, which ends the hold).
     * Returns true if anything was applied.
     */
    boolean applyUnanswered() {
        if (closing) {
            return false;
        }
        boolean progress = false;
        try {
            if (!waiting) {
                while (!pending.isEmpty() && !expectsAnswer(pending.peekFirst())) {
                    apply(pending.pollFirst());
                    progress = true;
                }
            } else {
                Iterator<StoreRequest> queued = pending.iterator();
                while (queued.hasNext() && waiting) {
                    StoreRequest request = queued.next();
                    if (request instanceof StoreRequest.CancelWait) {
                        queued.remove();
                        apply(request);
                        progress = true;
                    } else if (!expectsAnswer(request)) {
                        queued.remove();
                        apply(request);
                        progress = true;
                    }
                }
            }
        } catch (StoreProtocolException e) {
            reject(e.getMessage());
            return true;
        }
        return progress;
    }

    /** Phase 2 of a pass: applies the next request that expects an answer, unless a WAIT holds them back. */
    boolean applyOneAnswered() {
        if (closing) {
            return false;
        }
        if (!waiting && !pending.isEmpty()) {
            try {
                apply(pending.pollFirst());
            } catch (StoreProtocolException e) {
                reject(e.getMessage());
            }
            return true;
        }
        if (broken != null && (pending.isEmpty() || waiting)) {
            reject(broken);
            return true;
        }
        return false;
    }

    /** Writes the answers of this pass in one go. */
    void flush() {
        if (out != null) {
            Buffer answers = out;
            out = null;
            if (!closing) {
                socket.write(answers);
            }
        }
    }

    private static boolean expectsAnswer(StoreRequest request) {
        return !(request instanceof StoreRequest.Set || request instanceof StoreRequest.Append
                || request instanceof StoreRequest.MultiSet || request instanceof StoreRequest.QueuePush
                || request instanceof StoreRequest.Validate);
    }

    private void answer(Buffer frame) {
        if (out == null) {
            out = frame;
        } else {
            out.appendBuffer(frame);
        }
    }

    /** A WAIT of this connection was satisfied (called by {@link StoreState}, possibly from another connection's request). */
    private void released() {
        if (closing) {
            return;
        }
        answer(ResponseEncoder.stopWaiting());
        waiting = false;
        scheduler.schedule(this);
    }

    private void apply(StoreRequest request) {
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
            members.onSet(this, set.key());
        } else if (request instanceof StoreRequest.Get get) {
            answer(ResponseEncoder.value(state.get(get.key())));
        } else if (request instanceof StoreRequest.Add add) {
            answer(ResponseEncoder.int64(state.add(add.key(), add.delta())));
        } else if (request instanceof StoreRequest.Check check) {
            answer(ResponseEncoder.checkResult(state.containsAll(check.keys())));
        } else if (request instanceof StoreRequest.Wait wait) {
            boolean ready = state.awaitKeys(this, wait.keys(), this::released);
            if (ready) {
                answer(ResponseEncoder.stopWaiting());
            } else {
                waiting = true;
            }
        } else if (request instanceof StoreRequest.GetNumKeys) {
            answer(ResponseEncoder.int64(state.size()));
        } else if (request instanceof StoreRequest.DeleteKey delete) {
            answer(ResponseEncoder.int64(state.delete(delete.key()) ? 1 : 0));
        } else if (request instanceof StoreRequest.CancelWait) {
            // Pending: answered in the wait's place. Not pending (answered before the cancel came): the late
            // WAIT_CANCELED follows in order, after the STOP_WAITING, as TCPStore does.
            state.cancelWaits(this);
            waiting = false;
            answer(ResponseEncoder.waitCanceled());
        } else if (request instanceof StoreRequest.Ping ping) {
            answer(ResponseEncoder.pong(ping.nonce()));
        } else if (request instanceof StoreRequest.CompareSet compareSet) {
            answer(ResponseEncoder.value(state.compareSet(compareSet.key(), compareSet.expected(), compareSet.desired())));
        } else if (request instanceof StoreRequest.Append append) {
            state.append(append.key(), append.value());
        } else if (request instanceof StoreRequest.MultiGet multiGet) {
            answer(ResponseEncoder.values(state.getAll(multiGet.keys())));
        } else if (request instanceof StoreRequest.MultiSet multiSet) {
            state.setAll(multiSet.keys(), multiSet.values());
        } else if (request instanceof StoreRequest.QueuePush push) {
            state.queuePush(push.key(), push.value());
        } else if (request instanceof StoreRequest.QueuePop pop) {
            StoreState.Popped popped = state.queuePop(pop.key());
            answer(ResponseEncoder.popped(popped.lengthBefore(), popped.value()));
        } else if (request instanceof StoreRequest.QueueLen len) {
            answer(ResponseEncoder.int64(state.queueLength(len.key())));
        } else if (request instanceof StoreRequest.ListKeys) {
            answer(ResponseEncoder.keys(state.keys()));
        } else if (request instanceof StoreRequest.Validate) {
            throw new StoreProtocolException("VALIDATE sent twice");
        } else {
            throw new StoreProtocolException("unhandled request " + request.type());
        }
    }

    private void reject(String reason) {
        LOG.warnf("store: closing connection from %s: %s", remote, reason);
        flush(); // answers to the requests applied before the bad one
        onClosed();
        socket.close();
    }
}
