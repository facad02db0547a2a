package io.symmem.config;

/**
 * One place libnvshmem_host may be loaded from: {@code path} as dlopen takes it (absolute, or the bare
 * soname for the dynamic loader's own search), and {@code origin}, why it is on the list, for the
 * "looked in: ..." error.
 */
public record LibraryCandidate(String path, String origin) {
}
