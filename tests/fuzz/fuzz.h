/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h - what the fuzz targets of tests/fuzz share: the libFuzzer entry
 * points, and an in-process configfsd (samples, shipped schemas, a store
 * in a temporary folder) on 127.0.0.1 that the server targets send bytes
 * to over a socket, as a client would.
 */
#ifndef CFS_FUZZ_H
#define CFS_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Start the server once (later calls do nothing); aborts when it cannot. */
void fuzz_server_start(void);

/* The same server, with bearer tokens: @lines is the text of its --tokens
 * file; more than @burst wrong tokens from one address within @window_s
 * seconds are answered 429 (0: the defaults). */
void fuzz_server_start_tokens(const char *lines,
                              unsigned int burst,
                              unsigned int window_s);

/* Send @len bytes as they are on a new connection, then half-close it,
 * and read the answer until the server closes. @return the status of the
 * first response (100-599), or 0 when there was none. */
int fuzz_server_send(const void *data, size_t len);

/* As fuzz_server_send(), from the address @from (host order) of
 * 127.0.0.0/8, each of which the server counts as a client of its own. */
int fuzz_server_send_from(uint32_t from, const void *data, size_t len);

/* A request for @method @path with @body (@len bytes, Content-Length and
 * Content-Type @type when non-NULL). @return as fuzz_server_send(). */
int fuzz_server_request(const char *method,
                        const char *path,
                        const char *type,
                        const void *body,
                        size_t len);

/* How the last exchange ended: "closed" by the server, "silence" (no byte
 * for the wait), or recv()'s error. */
extern const char *last_end;

#endif /* CFS_FUZZ_H */
