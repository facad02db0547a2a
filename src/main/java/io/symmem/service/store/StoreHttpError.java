package io.symmem.service.store;

/** The JSON body of every store route's error: what went wrong and, where one is concerned, the key. */
public record StoreHttpError(String error, String key) {}
