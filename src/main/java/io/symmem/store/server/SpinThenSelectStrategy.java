package io.symmem.store.server;

import io.netty.channel.SelectStrategy;
import io.netty.util.IntSupplier;

/**
 * Netty select strategy of the store server's event loop: after any activity it keeps polling the
 * sockets (a non-blocking select per turn) for a short window before it blocks in select again.
 *
 * <p>Why: a store request is served in a few microseconds, but waking a thread that sleeps in
 * epoll_wait costs several more (more still on a virtual machine, where an idle vCPU is halted and
 * needs an interrupt). Rendezvous traffic comes in bursts (every rank asks at once, then again a few
 * microseconds later), so staying awake for a window after the last request removes that wake-up
 * from most round trips, while an idle store still sleeps and costs nothing.
 *
 * <p>The window is measured from the last turn that found work: a turn right after a blocking select
 * (something woke the loop), a non-blocking select that found ready sockets, or queued tasks. Empty
 * polls answer {@link SelectStrategy#CONTINUE}, which skips the turn entirely; with NIO a 0-result
 * select would instead count towards Netty's "premature wake-up" selector rebuild. A timer due while
 * the loop polls runs at the latest when the window ends. Confined to the loop's thread.
 */
final class SpinThenSelectStrategy implements SelectStrategy {

    private final long spinNanos;
    private long spinUntil;
    private boolean wasBlocked;

    SpinThenSelectStrategy(long spinNanos) {
        if (spinNanos < 0) {
            throw new IllegalArgumentException("spinNanos must be >= 0, got " + spinNanos);
        }
        this.spinNanos = spinNanos;
        this.spinUntil = System.nanoTime(); // nanoTime may be negative: never compare against 0
    }

    @Override
    public int calculateStrategy(IntSupplier selectNow, boolean hasTasks) throws Exception {
        if (hasTasks) {
            // Netty's default: look at the sockets without blocking, then run the tasks.
            markActive();
            return selectNow.get();
        }
        if (spinNanos == 0) {
            return SelectStrategy.SELECT;
        }
        if (wasBlocked) {
            // The blocking select of the previous turn returned: something happened.
            wasBlocked = false;
            markActive();
        }
        int ready = selectNow.get();
        if (ready > 0) {
            markActive();
            return ready;
        }
        if (System.nanoTime() - spinUntil < 0) {
            return SelectStrategy.CONTINUE;
        }
        wasBlocked = true;
        return SelectStrategy.SELECT;
    }

    private void markActive() {
        spinUntil = System.nanoTime() + spinNanos;
    }
}
