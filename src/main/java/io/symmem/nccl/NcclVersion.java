package io.symmem.nccl;

/**
 * The loaded NCCL's version, from ncclGetVersion. {@code suffix} is what torch.cuda.nccl.version()
 * appends from NCCL_SUFFIX; NCCL's C API has no run-time call for it, so a library loaded at run time
 * reports "" (docs/nccl.md).
 */
public record NcclVersion(int major, int minor, int patch, String suffix, int code) {

    /** True when this version is major.minor or later (e.g. atLeast(2, 27) for symmetric windows). */
    public boolean atLeast(int wantMajor, int wantMinor) {
        return major > wantMajor || (major == wantMajor && minor >= wantMinor);
    }

    @Override
    public String toString() {
        return major + "." + minor + "." + patch + suffix;
    }
}
