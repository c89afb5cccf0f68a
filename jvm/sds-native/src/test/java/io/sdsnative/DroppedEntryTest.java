package io.sdsnative;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.Test;

class DroppedEntryTest {
    private static final long T = 1_700_000_000_000L;

    /** Collects what sds-native logs (System.Logger goes to java.util.logging by default). */
    private static final class Collected extends Handler {
        final List<LogRecord> records = new ArrayList<>();

        @Override
        public synchronized void publish(LogRecord record) {
            records.add(record);
        }

        synchronized List<LogRecord> warnings() {
            List<LogRecord> out = new ArrayList<>();
            for (LogRecord r : records) {
                if (r.getLevel() == Level.WARNING) {
                    out.add(r);
                }
            }
            return out;
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    }

    /** Enters and forgets the entry: nothing refers to it once this returns. */
    private static void dropAnEntry(Client client, String point) {
        assertFalse(client.enter(point, T).isDowngraded());
    }

    /** Collects garbage until the permits of {@code point} are back (bounded). */
    static long concurrentAfterGc(Client client, String point) throws InterruptedException {
        GarbageCollection.until(100, 20, () -> client.stats(point, T).concurrent() == 0);
        return client.stats(point, T).concurrent();
    }

    @Test
    void aDroppedEntryIsNoSampleOfAnAdaptiveLimit() throws InterruptedException {
        try (Client client = new Client(4)) {
            client.setStrategy("adaptive", Strategy.builder().concurrentThreshold(-1).adaptiveConcurrency(1)
                    .adaptiveMinLimit(1).adaptiveInitialLimit(20).build());
            dropAnEntry(client, "adaptive");
            assertEquals(0, concurrentAfterGc(client, "adaptive"), "the collected entry's permit came back");
            Stats s = client.stats("adaptive", T);
            // Exited as failed, it would be an AIMD drop: 20 -> 18.
            assertEquals(20, s.adaptiveLimit(), "when it ended is unknown: no sample");
            assertEquals(1, s.exception());
        }
    }

    @Test
    void aDroppedEntryReturnsItsPermitAndIsLoggedOnce() throws InterruptedException {
        Logger logger = Logger.getLogger(Log.NAME);
        Collected log = new Collected();
        logger.addHandler(log);
        try (Client client = new Client(4)) {
            client.setStrategy("dropped.point", Strategy.builder().concurrentThreshold(1).build());
            dropAnEntry(client, "dropped.point");
            assertEquals(1, client.stats("dropped.point", T).concurrent());
            assertTrue(client.enter("dropped.point", T).isDowngraded(), "the permit is still out");

            assertEquals(0, concurrentAfterGc(client, "dropped.point"), "the collected entry's permit came back");
            try (Entry next = client.enter("dropped.point", T)) {
                assertFalse(next.isDowngraded());
            }
            Stats s = client.stats("dropped.point", T);
            assertEquals(1, s.exception(), "abandoned: it never said it succeeded");
            assertEquals(0, s.timeout());
            List<LogRecord> warnings = log.warnings();
            assertEquals(1, warnings.size(), warnings.toString());
            assertTrue(warnings.get(0).getMessage().contains("\"dropped.point\""), warnings.get(0).getMessage());

            // An entry that exited is not reported and its permit is not returned twice.
            client.enter("dropped.point", T).exit(T);
            System.gc();
            Thread.sleep(50);
            assertEquals(0, client.stats("dropped.point", T).concurrent());
            assertEquals(1, log.warnings().size());
        } finally {
            logger.removeHandler(log);
        }
    }

    @Test
    void watchesOfExitedEntriesDoNotPileUp() {
        try (Client client = new Client(4)) {
            client.setStrategy("p", Strategy.builder().concurrentThreshold(10).build());
            List<Entry> open = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                open.add(client.enter("p", T));
            }
            for (int i = 0; i < 10_000; i++) {
                client.enter("p", T).exit(T);
            }
            assertEquals(5, client.watching(), "an exit frees its watch's slot");
            assertEquals(DroppedEntries.FIRST_SLOTS, client.watchCapacity(), "so the slots never run out");
            client.removeStrategy("p");
            client.setStrategy("free", Strategy.builder().visitThreshold(100).build());
            client.enter("free", T).exit(T);
            Entry unwatched = client.enter("p", T);
            assertEquals(5, client.watching(), "no limit, no watch");
            unwatched.exit(T);
            assertEquals(5, client.stats("p", T).concurrent());
            for (Entry e : open) {
                e.exit(T);
            }
            assertEquals(0, client.watching());
            assertEquals(0, client.stats("p", T).concurrent());
        }
    }

    /** Enters {@code n} times and keeps the entries. */
    private static List<Entry> enterMany(Client client, String point, int n) {
        List<Entry> entries = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Entry e = client.enter(point, T);
            assertFalse(e.isDowngraded());
            entries.add(e);
        }
        return entries;
    }

    @Test
    void watchesInTheArraysAGrowthReplacedStillReturnTheirPermits() throws InterruptedException {
        Logger logger = Logger.getLogger(Log.NAME);
        Collected log = new Collected();
        boolean parents = logger.getUseParentHandlers();
        logger.addHandler(log);
        logger.setUseParentHandlers(false); // 300 warnings
        try (Client client = new Client(4)) {
            client.setStrategy("many", Strategy.builder().concurrentThreshold(10_000).build());
            List<Entry> entries = enterMany(client, "many", 600);
            assertEquals(600, client.watching());
            int capacity = client.watchCapacity();
            assertTrue(capacity >= 1024 && capacity <= 4096, "600 watches of one thread in " + capacity + " slots");
            // The first entries' watches sit in the first array, which new watches no longer use.
            for (int i = 0; i < entries.size(); i += 2) {
                entries.get(i).exit(T);
            }
            assertEquals(300, client.watching());
            assertEquals(300, client.stats("many", T).concurrent());
            entries = null;

            assertEquals(0, concurrentAfterGc(client, "many"), "every dropped entry's permit came back");
            assertEquals(0, client.watching());
            assertEquals(300, log.warnings().size());
            Stats s = client.stats("many", T);
            assertEquals(300, s.exception(), "one per abandoned entry");
            assertEquals(600, s.visit());
        } finally {
            logger.setUseParentHandlers(parents);
            logger.removeHandler(log);
        }
    }
}
