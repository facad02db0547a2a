package io.symmem.cli;

import java.io.File;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The command line that starts this same application again (same JVM, options and class path). */
final class SelfCommand {
    private SelfCommand() {
    }

    /**
     * One rank of a world on this machine, as torchrun starts it: RANK = LOCAL_RANK = {@code rank},
     * WORLD_SIZE = LOCAL_WORLD_SIZE = {@code ranks}, MASTER_ADDR; stderr merged into stdout.
     */
    static ProcessBuilder localRank(List<String> arguments, int rank, int ranks, String masterAddr) {
        return nodeRank(arguments, 0, rank, ranks, 1, masterAddr);
    }

    /**
     * Local rank {@code localRank} of node {@code node} (of {@code nodes}, {@code perNode} ranks each), as
     * torchrun numbers them: RANK = node × perNode + LOCAL_RANK, WORLD_SIZE = nodes × perNode.
     */
    static ProcessBuilder nodeRank(List<String> arguments, int node, int localRank, int perNode, int nodes, String masterAddr) {
        ProcessBuilder builder = new ProcessBuilder(of(arguments)).redirectErrorStream(true);
        Map<String, String> env = builder.environment();
        env.put("RANK", Integer.toString(node * perNode + localRank));
        env.put("LOCAL_RANK", Integer.toString(localRank));
        env.put("WORLD_SIZE", Integer.toString(nodes * perNode));
        env.put("LOCAL_WORLD_SIZE", Integer.toString(perNode));
        env.put("MASTER_ADDR", masterAddr);
        return builder;
    }

    static List<String> of(List<String> arguments) {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command()
                .orElse(System.getProperty("java.home") + File.separator + "bin" + File.separator + "java"));
        for (String option : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            // A debugger agent would make every rank try to bind the same debug port, and every rank of an
            // AOT training run would write the same cache file.
            if (!option.startsWith("-agentlib:jdwp") && !option.startsWith("-XX:AOTCacheOutput")
                    && !option.startsWith("-XX:AOTMode") && !option.startsWith("-XX:AOTConfiguration")) {
                command.add(option);
            }
        }
        String classPath = System.getProperty("java.class.path");
        if (classPath.endsWith(".jar") && !classPath.contains(File.pathSeparator)) {
            command.add("-jar");
            command.add(classPath);
        } else {
            command.add("-cp");
            command.add(classPath);
            command.add(SymmemMain.class.getName());
        }
        command.addAll(arguments);
        return command;
    }
}
