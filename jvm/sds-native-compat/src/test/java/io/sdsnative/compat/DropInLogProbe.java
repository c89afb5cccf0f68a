package io.sdsnative.compat;

import com.didiglobal.sds.client.counter.PowerfulCycleTimeCounter;
import com.didiglobal.sds.client.counter.SlidingWindowData;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** Run in a child JVM by DropInTest: makes counters and prints what was logged. */
public final class DropInLogProbe {
    private DropInLogProbe() {}

    public static void main(String[] args) {
        List<LogRecord> records = new ArrayList<>();
        Logger logger = Logger.getLogger(io.sdsnative.Log.NAME);
        logger.setUseParentHandlers(false);
        logger.addHandler(new Handler() {
            @Override
            public synchronized void publish(LogRecord record) {
                records.add(record);
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        });
        new SlidingWindowData();
        new PowerfulCycleTimeCounter();
        new SlidingWindowData(3, 10, 1);
        System.out.println("records " + records.size());
        for (LogRecord r : records) {
            System.out.println(r.getLevel() + " " + r.getMessage());
        }
    }
}
