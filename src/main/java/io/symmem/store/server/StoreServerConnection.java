package io.symmem.store.server;

import io.symmem.store.StoreLimits;
import io.symmem.store.StoreProtocolException;
import io.symmem.store.wire.FrameInput;
import io.symmem.store.wire.Popped;
import io.symmem.store.wire.QueryType;
import io.symmem.store.wire.RequestDecoder;
import io.symmem.store.wire.ResponseEncoder;
import io.symmem.store.wire.StoreRequest;
import io.symmem.store.wire.TcpStoreWire;
import io.vertx.core.Context;
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
 *
 * <p><b>Backpressure.</b> Answers go through an {@link AnswerQueue}. While its unsent answers are at
 * the soft bound, the connection is not read from and its requests that have an answer are not
 * applied (they would only add to the queue); requests without an answer already read are still
 * applied in order (they cost no answer, and a set of this client may release its own wait). Reading
 * also stops while the requests read but not yet applied (held behind a pending WAIT) reach the same
 * bound, so neither side of a connection can grow without bound. A pending WAIT is not affected: it
 * is answered when its keys appear (a byte beyond the bound), and the time limit that closes a stuck
 * connection counts only while answers wait for the socket, never while the client merely waits.
 */
final class StoreServerConnection implements AnswerQueue.Owner {

    private static final Logger LOG = Logger.getLogger(StoreServerConnection.class);

    /**
     * Most bytes decoded from one connection per loop turn. Without it a client that sends as fast as
     * the loop decodes (a 68 MB MULTI_SET) is read for up to ~100 ms at a stretch on the epoll
     * transport: Netty re-reads an edge-triggered socket that still has data from a task that queues
     * itself again, and checks the time only every 64 tasks, so the other sockets wait.
     */
    static final long READ_TURN_BYTES = 1024 * 1024;

    private final NetSocket socket;
    private final StoreState state;
    private final StoreStatistics statistics;
    private final StoreServer.Scheduler scheduler;
    private final StoreMembers members;
    private final StoreLimits limits;
    private final Context context;
    private final NextTurn nextTurn;
    private final RequestDecoder decoder;
    private final String remote;
    private final FrameInput input = new FrameInput();
    /** Decoded, not yet applied, in arrival order. */
    private final ArrayDeque<Decoded> pending = new ArrayDeque<>();
    /** Wire bytes of the requests in {@link #pending}. */
    private long pendingBytes;
    /** Answers not yet taken by the socket. */
    private final AnswerQueue answers;
    private boolean validated;
    private boolean closing;
    /** onClosed ran: waits dropped and member keys released (once, whichever close came first). */
    private boolean released;
    /** One of this connection's WAITs is registered and unanswered: answered requests are held back. */
    private boolean waiting;
    /** Why a frame could not be decoded; the connection is closed once the requests before it are applied. */
    private String broken;
    /** The socket is paused (see backpressure above). */
    private boolean readPaused;
    /** Bytes read in loop turn {@link #readTurn}, and whether that reached {@link #READ_TURN_BYTES} (reading waits for the next turn). */
    private long readThisTurn;
    private long readTurn = -1;
    private boolean turnSpent;
    /** A request with an answer was left unapplied because the answer queue was full. */
    private boolean heldByAnswers;
    /** Already in the scheduler's list of connections with work. */
    boolean scheduled;

    /** A decoded request and the bytes its frame took on the wire. */
    private record Decoded(StoreRequest request, long frameBytes) {}

    StoreServerConnection(NetSocket socket, StoreState state, StoreMembers members, StoreStatistics statistics,
                          StoreLimits limits, StoreServer.Scheduler scheduler, Context context, NextTurn nextTurn) {
        this.socket = socket;
        this.state = state;
        this.members = members;
        this.statistics = statistics;
        this.scheduler = scheduler;
        this.limits = limits;
        this.context = context;
        this.nextTurn = nextTurn;
        this.decoder = new RequestDecoder(limits);
        this.remote = String.valueOf(socket.remoteAddress());
        this.answers = new AnswerQueue(socket, context, nextTurn, limits, this);
    }

    String remote() {
        return remote;
    }

    /** Decodes what arrived; applying is left to the scheduler's pass after this read batch. */
    void onData(Buffer chunk) {
        if (closing || broken != null) {
            return;
        }
        countRead(chunk.length());
        input.append(chunk);
        try {
            StoreRequest request;
            while ((request = decoder.next(input)) != null) {
                pending.addLast(new Decoded(request, decoder.lastFrameBytes()));
                pendingBytes += decoder.lastFrameBytes();
            }
        } catch (StoreProtocolException e) {
            broken = e.getMessage();
        }
        input.discardConsumed();
        updateReading();
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
        pendingBytes = 0;
        answers.release();
        state.cancelWaits(this);
        members.onClosed(this, remote);
    }

    /** Closes the connection after the answers already queued (server stop). */
    void close() {
        closing = true;
        closeAfterFlush();
    }

    /**
     * Vert.x closes a socket only once what was written before has gone out: a client that reads
     * nothing would keep it open for ever. Such a close is cut short after the drain time limit.
     */
    private void closeAfterFlush() {
        socket.close();
        if (answers.queued() > 0) {
            context.owner().setTimer(limits.answerDrainTimeout().toMillis(), t -> abort());
        }
    }

    /** Closes the socket now, dropping what was queued for it. */
    private void abort() {
        VertxInternals.abort(socket);
    }

    /** The answer queue passed the hard bound, or has not drained within the time limit. */
    @Override
    public void stuck(String why) {
        if (released) {
            return;
        }
        LOG.warnf("store: closing connection from %s: %s", remote, why);
        statistics.closedStuck();
        onClosed();
        abort();
    }

    /** The answer queue fell to half its bound: read and apply again. */
    @Override
    public void drained() {
        if (closing) {
            return;
        }
        LOG.debugf("store: connection from %s drained its answers; reading it again", remote);
        updateReading();
        if (heldByAnswers) {
            heldByAnswers = false;
            scheduler.schedule(this);
        }
    }

    /** Counts a chunk against this turn's read budget; past it, reading waits for the loop's next turn. */
    private void countRead(int bytes) {
        long turn = nextTurn.turn();
        if (turn != readTurn) {
            readTurn = turn;
            readThisTurn = 0;
        }
        readThisTurn += bytes;
        if (readThisTurn >= READ_TURN_BYTES && !turnSpent) {
            turnSpent = true;
            nextTurn.atNextTurn(() -> {
                turnSpent = false;
                updateReading();
            });
        }
    }

    /**
     * Pauses or resumes reading: paused while the answer queue is backed up or the requests held
     * unapplied reach the soft bound, resumed when both are at half of it (hysteresis, so that a
     * client at the bound is not paused and resumed for every answer).
     */
    private void updateReading() {
        if (closing) {
            return;
        }
        long bound = limits.answerQueueBytes();
        boolean pause = turnSpent || answers.backedUp() || pendingBytes >= bound || (readPaused && pendingBytes > bound / 2);
        if (pause == readPaused) {
            return;
        }
        readPaused = pause;
        if (pause) {
            if (!turnSpent) {
                LOG.debugf("store: pausing connection from %s: %d answer bytes unsent, %d request bytes held",
                        remote, answers.unsent(), pendingBytes);
            }
            socket.pause();
        } else {
            socket.resume();
        }
    }

    /** This connection's figures, for diagnostics. */
    StoreConnectionStats stats() {
        return new StoreConnectionStats(remote, answers.queued(), answers.unsent(), pendingBytes, answers.backedUp(), readPaused);
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
                while (!pending.isEmpty() && !expectsAnswer(pending.peekFirst().request())) {
                    apply(take());
                    progress = true;
                }
            } else {
                Iterator<Decoded> queued = pending.iterator();
                while (queued.hasNext() && waiting) {
                    Decoded next = queued.next();
                    if (next.request() instanceof StoreRequest.CancelWait || !expectsAnswer(next.request())) {
                        queued.remove();
                        pendingBytes -= next.frameBytes();
                        apply(next.request());
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

    private StoreRequest take() {
        Decoded next = pending.pollFirst();
        pendingBytes -= next.frameBytes();
        return next.request();
    }

    /**
     * Phase 2 of a pass: applies the next request that expects an answer, unless a WAIT holds them
     * back or the answer queue is full (then {@link #drained()} asks for another pass).
     */
    boolean applyOneAnswered() {
        if (closing) {
            return false;
        }
        if (!waiting && !pending.isEmpty()) {
            if (!answers.accepting()) {
                heldByAnswers = true;
                return false;
            }
            try {
                apply(take());
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

    /** Writes what the socket can take of this pass's answers, and reads again if the requests held went down. */
    void flush() {
        if (closing) {
            return;
        }
        answers.flush();
        updateReading();
        if (heldByAnswers && answers.accepting()) {
            // The socket took everything at once: go on without waiting for a drain.
            heldByAnswers = false;
            scheduler.schedule(this);
        }
    }

    private static boolean expectsAnswer(StoreRequest request) {
        return !(request instanceof StoreRequest.Set || request instanceof StoreRequest.Append
                || request instanceof StoreRequest.MultiSet || request instanceof StoreRequest.QueuePush
                || request instanceof StoreRequest.Validate);
    }

    private void answer(Buffer frame) {
        answers.add(frame);
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
            answers.addValue(state.get(get.key()));
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
            answers.addValue(state.compareSet(compareSet.key(), compareSet.expected(), compareSet.desired()));
        } else if (request instanceof StoreRequest.Append append) {
            state.append(append.key(), append.value());
        } else if (request instanceof StoreRequest.MultiGet multiGet) {
            answers.addValues(state.getAll(multiGet.keys()));
        } else if (request instanceof StoreRequest.MultiSet multiSet) {
            state.setAll(multiSet.keys(), multiSet.values());
        } else if (request instanceof StoreRequest.QueuePush push) {
            state.queuePush(push.key(), push.value());
        } else if (request instanceof StoreRequest.QueuePop pop) {
            Popped popped = state.queuePop(pop.key());
            answer(ResponseEncoder.int64(popped.lengthBefore()));
            if (popped.value() != null) {
                answers.addValue(popped.value());
            }
        } else if (request instanceof StoreRequest.QueueLen len) {
            answer(ResponseEncoder.int64(state.queueLength(len.key())));
        } else if (request instanceof StoreRequest.ListKeys) {
            answers.addKeys(state.keys());
        } else if (request instanceof StoreRequest.Validate) {
            throw new StoreProtocolException("VALIDATE sent twice");
        } else {
            throw new StoreProtocolException("unhandled request " + request.type());
        }
    }

    private void reject(String reason) {
        LOG.warnf("store: closing connection from %s: %s", remote, reason);
        answers.flush(); // answers to the requests applied before the bad one
        onClosed();
        closeAfterFlush();
    }
}
