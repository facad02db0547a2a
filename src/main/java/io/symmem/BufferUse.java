package io.symmem;

import java.time.Duration;

/**
 * The call inside one buffer now (a collective, a replay, a read or a write), so that a second call from
 * another thread is refused instead of tearing the first one's data, and so that closing the buffer
 * waits for the call inside (within a deadline) instead of freeing memory under it. The thread inside
 * may enter again (a collective issued inside a capture of the same buffer).
 */
final class BufferUse {
    private final String group;
    private final String what;
    private Thread inside;
    private String operation;
    private int depth;
    private boolean closing;
    private boolean closed;

    /** {@code what}: the buffer as messages name it ("the fp32 buffer of 16 elements"), in {@code group}. */
    BufferUse(String group, String what) {
        this.group = group;
        this.what = what;
    }

    /** Runs {@code call} as {@code op} inside the buffer, or refuses it at once. */
    void run(String op, Runnable call) {
        enter(op);
        try {
            call.run();
        } finally {
            leave();
        }
    }

    private synchronized void enter(String op) {
        Thread me = Thread.currentThread();
        if (closed || closing) {
            throw new IllegalStateException(op + " on group '" + group + "' refused: " + what + " is "
                    + (closed ? "closed" : "being closed"));
        }
        if (inside != null && inside != me) {
            throw new IllegalStateException(op + " on group '" + group + "' refused: " + operation + " (thread '"
                    + inside.getName() + "') is running on " + what + " right now; the calls on one buffer are one"
                    + " sequence that every rank issues in the same order, and a read or write under a collective would"
                    + " see or change half of its data: make them from one thread at a time, or give each thread a buffer"
                    + " of its own");
        }
        if (depth++ == 0) {
            inside = me;
            operation = op;
        }
    }

    private synchronized void leave() {
        if (--depth == 0) {
            inside = null;
            operation = null;
            notifyAll();
        }
    }

    /**
     * Starts closing: from now on every call is refused. Waits up to {@code patience} for the call inside
     * to return; if it has not, the close is refused (the buffer stays as it was, and closing again later
     * works). False when the buffer was closed already.
     */
    synchronized boolean beginClose(Duration patience) {
        if (closed) {
            return false;
        }
        if (inside == Thread.currentThread()) {
            throw new CloseRefusedException("close of " + what + " of group '" + group + "' refused: this thread is inside " + operation
                    + " on it; close it after that call returns");
        }
        long deadline = System.nanoTime() + patience.toNanos();
        boolean interrupted = false;
        while (inside != null) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                wait(Math.max(1, left / 1_000_000));
            } catch (InterruptedException e) {
                interrupted = true;
                break;
            }
        }
        if (inside != null) {
            String running = operation + " (thread '" + inside.getName() + "')";
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            throw new CloseRefusedException("close of " + what + " of group '" + group + "' refused: " + running + " is still running on it after "
                    + patience.toMillis() + " ms; the buffer stays open: close it again once that call has returned");
        }
        closing = true;
        return true;
    }

    /** Ends a close that {@link #beginClose} started: freed, or reopened when freeing was refused. */
    synchronized void endClose(boolean freed) {
        closing = false;
        closed = freed;
    }

    /** The operation inside the buffer now, or null: for tests that wait for a call to be inside. */
    synchronized String operationInside() {
        return operation;
    }

    synchronized boolean isClosed() {
        return closed;
    }
}
