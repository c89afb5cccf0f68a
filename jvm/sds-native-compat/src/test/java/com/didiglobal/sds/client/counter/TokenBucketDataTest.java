package com.didiglobal.sds.client.counter;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class TokenBucketDataTest {
    static final long T0 = SlidingWindowDataTest.T0;

    @Test
    void countsTokensPerSecond() {
        TokenBucketData tokens = new TokenBucketData(100, 200);
        assertEquals(1, tokens.takeOneToken(T0));
        assertEquals(2, tokens.takeOneToken(T0 + 999));
        assertEquals(3, tokens.takeOneToken(T0 + 500));
        assertEquals(1, tokens.takeOneToken(T0 + 1000), "a new second starts at one");
        assertEquals(4, tokens.getCycleTokenBucketData().getCurSlidingCycleValue(T0 + 1000));
        assertEquals(1, new TokenBucketData().takeOneToken(T0));
    }
}
