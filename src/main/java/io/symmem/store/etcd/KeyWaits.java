package io.symmem.store.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.options.WatchOption;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import io.symmem.store.DurationText;
import io.symmem.store.StoreTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Waits until every one of some value keys exists, through a watch: the keys are read (linearizable
 * reads, so a member cut off from the quorum cannot answer), and the ones missing are watched from
 * the revision just after that read, so that no put in between is missed. One watch covers the
 * range from the smallest missing key to the largest, and events of other keys in it are ignored.
 * As TCPStore, a key counts once it has been set, even if deleted again before the others are.
 */
final class KeyWaits {

    private final KV kv;
    private final Watch watch;
    private final EtcdCalls calls;
    private final String storeName;

    KeyWaits(KV kv, Watch watch, EtcdCalls calls, String storeName) {
        this.kv = kv;
        this.watch = watch;
        this.calls = calls;
        this.storeName = storeName;
    }

    /**
     * The latest value seen of every key, once all exist.
     *
     * @param what the operation, for messages ("get")
     */
    CompletableFuture<Map<String, byte[]>> awaitAll(String what, List<String> keys, Duration timeout) {
        return new Wait(what, keys, timeout).start();
    }

    /** One wait: the keys still missing, the values found, the watch (if any). */
    private final class Wait {
        private final String what;
        private final Set<String> wanted;
        private final Duration timeout;
        private final long deadlineNanos;
        private final CompletableFuture<Map<String, byte[]>> result = new CompletableFuture<>();
        private final Map<String, byte[]> found = new HashMap<>();
        private final Set<String> missing = new LinkedHashSet<>();
        private Watch.Watcher watcher;
        private boolean watching;

        Wait(String what, List<String> keys, Duration timeout) {
            this.what = what;
            this.wanted = new LinkedHashSet<>(keys);
            this.timeout = timeout;
            this.deadlineNanos = System.nanoTime() + timeout.toNanos();
        }

        CompletableFuture<Map<String, byte[]>> start() {
            var timer = calls.timer().schedule(this::expire, Math.max(0, timeout.toNanos()), TimeUnit.NANOSECONDS);
            result.whenComplete((v, e) -> {
                timer.cancel(false);
                stopWatching();
            });
            read();
            return result;
        }

        /** Reads every wanted key; each read is retried past an unreachable member until the deadline. */
        private void read() {
            List<String> keys = new ArrayList<>(wanted);
            List<CompletableFuture<GetResponse>> reads = new ArrayList<>(keys.size());
            for (String key : keys) {
                reads.add(calls.retrying(what + " of key '" + key + "'", timeout, deadlineNanos, () -> kv.get(EtcdKeys.value(key))));
            }
            CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).whenComplete((ok, error) -> {
                if (error != null) {
                    result.completeExceptionally(EtcdFailures.unwrap(error));
                    return;
                }
                long revision = Long.MAX_VALUE;
                synchronized (this) {
                    missing.clear();
                    for (int i = 0; i < keys.size(); i++) {
                        GetResponse response = reads.get(i).join();
                        revision = Math.min(revision, response.getHeader().getRevision());
                        if (response.getKvs().isEmpty()) {
                            missing.add(keys.get(i));
                        } else {
                            found.put(keys.get(i), response.getKvs().get(0).getValue().getBytes());
                        }
                    }
                    if (missing.isEmpty()) {
                        result.complete(found);
                        return;
                    }
                    watchFrom(revision + 1);
                }
            });
        }

        private synchronized void watchFrom(long revision) {
            if (result.isDone()) {
                return;
            }
            ByteSequence first = null;
            ByteSequence last = null;
            for (String key : missing) {
                ByteSequence k = EtcdKeys.value(key);
                first = first == null || EtcdKeys.compare(k, first) < 0 ? k : first;
                last = last == null || EtcdKeys.compare(k, last) > 0 ? k : last;
            }
            WatchOption option = WatchOption.builder().withRange(EtcdKeys.after(last)).withRevision(revision)
                    .withNoDelete(true).withRequireLeader(true).build();
            watching = true;
            watcher = watch.watch(first, option, Watch.listener(this::events, this::watchFailed));
        }

        private void events(WatchResponse response) {
            synchronized (this) {
                for (WatchEvent event : response.getEvents()) {
                    if (event.getEventType() != WatchEvent.EventType.PUT) {
                        continue;
                    }
                    KeyValue kv = event.getKeyValue();
                    String key = EtcdKeys.userKey(kv.getKey());
                    if (wanted.contains(key)) {
                        found.put(key, kv.getValue().getBytes());
                        missing.remove(key);
                    }
                }
                if (!missing.isEmpty()) {
                    return;
                }
            }
            result.complete(found);
        }

        /** The watch broke (its member went, history compacted): read again and watch anew. */
        private void watchFailed(Throwable error) {
            synchronized (this) {
                stopWatching();
            }
            if (result.isDone() || System.nanoTime() >= deadlineNanos) {
                return;
            }
            calls.timer().schedule(this::read, 50, TimeUnit.MILLISECONDS);
        }

        private synchronized void stopWatching() {
            watching = false;
            if (watcher != null) {
                watcher.close();
                watcher = null;
            }
        }

        private void expire() {
            List<String> stillMissing;
            synchronized (this) {
                if (!watching && missing.isEmpty()) {
                    // Still reading: the reads' own deadline names what did not answer.
                    return;
                }
                stillMissing = List.copyOf(missing.isEmpty() ? wanted : missing);
            }
            result.completeExceptionally(new StoreTimeoutException("store " + storeName + ": timed out after "
                    + DurationText.of(timeout) + " waiting for key(s) " + stillMissing, stillMissing));
        }
    }
}
