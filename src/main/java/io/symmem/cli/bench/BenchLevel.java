package io.symmem.cli.bench;

import io.symmem.store.Store;
import io.symmem.store.StoreTimeoutException;
import io.symmem.store.client.TcpStoreClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One concurrency level of the store benchmark: N clients set, then get (reading back and checking
 * every key they wrote), then add to one shared counter. Every key written is verified: a get that
 * times out, or a key the timed get phase had no time to read and that CHECK does not find, is
 * <em>lost</em>; a value that differs, or a counter that does not end at the number of adds with
 * every intermediate value handed out exactly once, is an <em>error</em>.
 */
final class BenchLevel {

    /** Figures of one operation at this level. */
    record OpResult(String op, int clients, BenchPhase.Result phase, long errors, long lost) {
    }

    private final BenchClients clients;
    private final int n;
    private final String prefix;
    private final int opsPerClient;
    private final int valueBytes;
    private final Duration phaseLimit;
    private final Duration opTimeout;
    /** Keys this level wrote (set and the counter), for the final key count. */
    private long keysWritten;

    BenchLevel(BenchClients clients, int n, String prefix, int totalOps, int valueBytes, Duration phaseLimit,
               Duration opTimeout) {
        this.clients = clients;
        this.n = n;
        this.prefix = prefix + "/c" + n;
        this.opsPerClient = Math.max(1, (totalOps + n - 1) / n);
        this.valueBytes = valueBytes;
        this.phaseLimit = phaseLimit;
        this.opTimeout = opTimeout;
    }

    long keysWritten() {
        return keysWritten;
    }

    List<OpResult> run() throws InterruptedException {
        List<OpResult> results = new ArrayList<>(3);
        Duration grace = opTimeout.plusSeconds(5);
        try (BenchPhase phase = new BenchPhase(n)) {
            int[] ops = new int[n];
            Arrays.fill(ops, opsPerClient);
            boolean[][] written = new boolean[n][opsPerClient];

            BenchPhase.Result set = phase.run(ops, phaseLimit, grace, (c, i) -> {
                clients.get(c).set(key(c, i), BenchValues.of(key(c, i), valueBytes)).await().atMost(opTimeout);
                written[c][i] = true;
                return BenchPhase.Outcome.OK;
            });
            results.add(new OpResult("set", n, set, set.errors(), 0));
            for (boolean[] w : written) {
                for (boolean b : w) {
                    keysWritten += b ? 1 : 0;
                }
            }

            // Read back exactly the keys whose set succeeded, each by the client that wrote it.
            int[] toRead = new int[n];
            Arrays.fill(toRead, opsPerClient);
            BenchPhase.Result get = phase.run(toRead, phaseLimit, grace, (c, i) -> {
                if (!written[c][i]) {
                    return BenchPhase.Outcome.SKIPPED; // its set failed and is counted there
                }
                try {
                    byte[] v = clients.get(c).get(key(c, i), opTimeout).await().atMost(opTimeout.plusSeconds(1));
                    return Arrays.equals(v, BenchValues.of(key(c, i), valueBytes))
                            ? BenchPhase.Outcome.OK : BenchPhase.Outcome.ERROR;
                } catch (StoreTimeoutException e) {
                    return BenchPhase.Outcome.LOST;
                }
            });
            long unread = verifyUnread(written, get.done());
            results.add(new OpResult("get", n, get, get.errors(), get.lost() + unread));

            long[][] seen = new long[n][opsPerClient];
            String counter = prefix + "/counter";
            BenchPhase.Result add = phase.run(ops, phaseLimit, grace, (c, i) -> {
                seen[c][i] = clients.get(c).add(counter, 1).await().atMost(opTimeout);
                return BenchPhase.Outcome.OK;
            });
            keysWritten++;
            results.add(new OpResult("add", n, add, add.errors() + verifyCounter(counter, seen, add), 0));
        }
        return results;
    }

    /** Keys written but not read in the timed phase (deadline): checked with CHECK, missing ones are lost. */
    private long verifyUnread(boolean[][] written, int[] read) {
        long missing = 0;
        Store probe = clients.get(0);
        List<String> batch = new ArrayList<>();
        for (int c = 0; c < n; c++) {
            for (int i = read[c]; i < opsPerClient; i++) {
                if (written[c][i]) {
                    batch.add(key(c, i));
                }
            }
        }
        for (String k : batch) {
            if (!probe.check(List.of(k)).await().atMost(opTimeout)) {
                missing++;
            }
        }
        return missing;
    }

    /**
     * The adds of all clients must have handed out 1..total exactly once each, and the counter must
     * read "total" afterwards. Returns the number of discrepancies.
     */
    private long verifyCounter(String counter, long[][] seen, BenchPhase.Result add) {
        long total = add.ok();
        long[] values = new long[(int) total];
        int at = 0;
        for (int c = 0; c < n; c++) {
            for (int i = 0; i < add.done()[c] && at < values.length; i++) {
                if (seen[c][i] != 0) {
                    values[at++] = seen[c][i];
                }
            }
        }
        Arrays.sort(values, 0, at);
        long wrong = Math.abs(total - at);
        for (int i = 0; i < at; i++) {
            if (values[i] != i + 1) {
                wrong++;
            }
        }
        byte[] last = clients.get(0).get(counter, opTimeout).await().atMost(opTimeout.plusSeconds(1));
        if (!Long.toString(total).equals(new String(last, java.nio.charset.StandardCharsets.US_ASCII))) {
            wrong++;
        }
        return wrong;
    }

    private String key(int client, int op) {
        return prefix + "/" + client + "/" + op;
    }
}
