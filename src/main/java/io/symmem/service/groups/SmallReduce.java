package io.symmem.service.groups;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.symmem.collective.ReduceOp;
import io.symmem.service.http.ApiProblem;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The control plane's all-reduce of small numeric arrays: every rank's array travels through the
 * group's all-gather, and every rank reduces them itself in rank order, with the arithmetic of the
 * dtype (float32 rounds at every step, integers refuse to overflow), so every rank gets the same bits.
 * For data, use symmetric buffers; this is for counts, flags and figures.
 */
public final class SmallReduce {
    /** More values than this belong in a symmetric buffer, not in the store. */
    public static final int MAX_VALUES = 65_536;

    /** The element types of the control plane (the data plane's are {@link io.symmem.collective.DType}). */
    public enum ValueType {
        INT32, INT64, FLOAT32, FLOAT64;

        String word() {
            return name().toLowerCase(Locale.ROOT);
        }

        boolean integral() {
            return this == INT32 || this == INT64;
        }

        static ValueType parse(String text) {
            for (ValueType t : values()) {
                if (t.word().equals(text == null ? "" : text.trim().toLowerCase(Locale.ROOT))) {
                    return t;
                }
            }
            throw new ApiProblem(400, "dtype '" + text + "' is unknown; use int32, int64, float32 or float64");
        }
    }

    /** One rank's contribution, checked: its type, op and values (longs for integers, doubles otherwise). */
    public record Contribution(ValueType dtype, ReduceOp op, long[] integers, double[] floats) {
        int length() {
            return dtype.integral() ? integers.length : floats.length;
        }

        String describe() {
            return dtype.word() + " " + op.name().toLowerCase(Locale.ROOT) + " of " + length() + " values";
        }
    }

    private static final ObjectMapper JSON = new ObjectMapper();

    private SmallReduce() {
    }

    /** The request body {"dtype": ..., "op": ..., "values": [...]}, checked; errors name the field and index. */
    public static Contribution parse(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw new ApiProblem(400, "the body must be a JSON object {\"dtype\": \"float64\", \"op\": \"sum\", \"values\": [1, 2]}");
        }
        ValueType dtype = ValueType.parse(text(body, "dtype"));
        ReduceOp op = parseOp(text(body, "op"));
        if (op == ReduceOp.AVG && dtype.integral()) {
            throw new ApiProblem(400, "op avg needs dtype float32 or float64 (the average of integers is not one), got " + dtype.word());
        }
        JsonNode values = body.get("values");
        if (values == null || !values.isArray()) {
            throw new ApiProblem(400, "\"values\" must be an array of numbers");
        }
        if (values.size() > MAX_VALUES) {
            throw new ApiProblem(413, "\"values\" has " + values.size() + " elements; at most " + MAX_VALUES
                    + " go through the control plane (use a symmetric buffer for more)");
        }
        long[] integers = dtype.integral() ? new long[values.size()] : null;
        double[] floats = dtype.integral() ? null : new double[values.size()];
        for (int i = 0; i < values.size(); i++) {
            JsonNode v = values.get(i);
            if (!v.isNumber()) {
                throw new ApiProblem(400, "\"values\"[" + i + "] is " + v + ", not a number");
            }
            if (dtype.integral()) {
                if (!v.canConvertToExactIntegral() || !v.canConvertToLong()) {
                    throw new ApiProblem(400, "\"values\"[" + i + "] = " + v + " is not an integer of " + dtype.word());
                }
                long x = v.asLong();
                if (dtype == ValueType.INT32 && (x < Integer.MIN_VALUE || x > Integer.MAX_VALUE)) {
                    throw new ApiProblem(400, "\"values\"[" + i + "] = " + v + " is outside int32");
                }
                integers[i] = x;
            } else {
                double x = v.asDouble();
                if (dtype == ValueType.FLOAT32 && Float.isInfinite((float) x) && !Double.isInfinite(x)) {
                    throw new ApiProblem(400, "\"values\"[" + i + "] = " + v + " is outside float32");
                }
                floats[i] = dtype == ValueType.FLOAT32 ? (float) x : x;
            }
        }
        return new Contribution(dtype, op, integers, floats);
    }

    /** What travels through the store: the contribution as canonical JSON. */
    public static byte[] encode(Contribution c) {
        return toJson(c).toString().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Reduces every rank's contribution (index = group rank) in rank order; every rank must have sent
     * the same dtype, op and length, or all of them get a 409 naming the ranks that differ.
     */
    public static Contribution reduce(List<byte[]> gathered, SidecarGroup group) {
        List<Contribution> all = new ArrayList<>(gathered.size());
        for (int r = 0; r < gathered.size(); r++) {
            try {
                all.add(parse(JSON.readTree(gathered.get(r))));
            } catch (IOException | ApiProblem e) {
                throw new ApiProblem(409, "group '" + group.name() + "': world rank " + group.worldRanks()[r]
                        + " sent something that is no all-reduce contribution (" + e.getMessage() + ")",
                        List.of(group.worldRanks()[r]), e);
            }
        }
        Contribution first = all.get(0);
        List<Integer> differing = new ArrayList<>();
        List<String> what = new ArrayList<>();
        for (int r = 1; r < all.size(); r++) {
            Contribution c = all.get(r);
            if (c.dtype() != first.dtype() || c.op() != first.op() || c.length() != first.length()) {
                differing.add(group.worldRanks()[r]);
                what.add("world rank " + group.worldRanks()[r] + " sent " + c.describe());
            }
        }
        if (!differing.isEmpty()) {
            throw new ApiProblem(409, "group '" + group.name() + "': the ranks disagree on the all-reduce: world rank "
                    + group.worldRanks()[0] + " sent " + first.describe() + ", " + String.join(", ", what), differing, null);
        }
        return first.dtype().integral() ? reduceIntegers(all, first, group) : reduceFloats(all, first);
    }

    public static ObjectNode toJson(Contribution c) {
        ObjectNode out = JsonNodeFactory.instance.objectNode();
        out.put("dtype", c.dtype().word());
        out.put("op", c.op().name().toLowerCase(Locale.ROOT));
        ArrayNode values = out.putArray("values");
        if (c.dtype().integral()) {
            for (long v : c.integers()) {
                values.add(v);
            }
        } else if (c.dtype() == ValueType.FLOAT32) {
            for (double v : c.floats()) {
                values.add((float) v);
            }
        } else {
            for (double v : c.floats()) {
                values.add(v);
            }
        }
        return out;
    }

    private static Contribution reduceIntegers(List<Contribution> all, Contribution first, SidecarGroup group) {
        long[] acc = first.integers().clone();
        for (int r = 1; r < all.size(); r++) {
            long[] next = all.get(r).integers();
            for (int i = 0; i < acc.length; i++) {
                acc[i] = switch (first.op()) {
                    case SUM -> add(acc[i], next[i], first.dtype(), i, group);
                    case MAX -> Math.max(acc[i], next[i]);
                    case MIN -> Math.min(acc[i], next[i]);
                    case AVG -> throw new IllegalStateException("avg of integers is refused at parse");
                };
            }
        }
        return new Contribution(first.dtype(), first.op(), acc, null);
    }

    private static long add(long a, long b, ValueType dtype, int index, SidecarGroup group) {
        long sum;
        try {
            sum = Math.addExact(a, b);
        } catch (ArithmeticException e) {
            throw overflow(ValueType.INT64, index, group);
        }
        if (dtype == ValueType.INT32 && (sum < Integer.MIN_VALUE || sum > Integer.MAX_VALUE)) {
            throw overflow(dtype, index, group);
        }
        return sum;
    }

    private static ApiProblem overflow(ValueType dtype, int index, SidecarGroup group) {
        return new ApiProblem(422, "group '" + group.name() + "': the sum at index " + index + " overflows " + dtype.word());
    }

    private static Contribution reduceFloats(List<Contribution> all, Contribution first) {
        boolean single = first.dtype() == ValueType.FLOAT32;
        double[] acc = first.floats().clone();
        for (int r = 1; r < all.size(); r++) {
            double[] next = all.get(r).floats();
            for (int i = 0; i < acc.length; i++) {
                double v = switch (first.op()) {
                    case SUM, AVG -> single ? (float) acc[i] + (float) next[i] : acc[i] + next[i];
                    case MAX -> Math.max(acc[i], next[i]);
                    case MIN -> Math.min(acc[i], next[i]);
                };
                acc[i] = single ? (float) v : v;
            }
        }
        if (first.op() == ReduceOp.AVG) {
            for (int i = 0; i < acc.length; i++) {
                acc[i] = single ? (float) acc[i] / all.size() : acc[i] / all.size();
            }
        }
        return new Contribution(first.dtype(), first.op(), null, acc);
    }

    private static String text(JsonNode body, String field) {
        JsonNode v = body.get(field);
        if (v == null || !v.isTextual()) {
            throw new ApiProblem(400, "\"" + field + "\" must be a string");
        }
        return v.asText();
    }

    private static ReduceOp parseOp(String text) {
        for (ReduceOp op : ReduceOp.values()) {
            if (op.name().equalsIgnoreCase(text.trim())) {
                return op;
            }
        }
        throw new ApiProblem(400, "op '" + text + "' is unknown; use sum, avg, max or min");
    }
}
