package io.symmem.nativ;

/** Closes file descriptors received from peers once they are imported. */
public final class Fds {
    private Fds() {
    }

    /** Closes every fd of the array (channels hand each rank a dup of its own fd too). */
    public static void closeAll(int[] fds) {
        for (int fd : fds) {
            if (fd >= 0) {
                SymmemLibrary.symmem_close_fd(fd);
            }
        }
    }
}
