// SPDX-License-Identifier: MIT
/*
 * fuzz-request.c - raw HTTP bytes through the whole server: libmicrohttpd's
 * parser, framing checks, authorization-free routing, every handler. The
 * input is sent as it is on a new connection, which is then half-closed.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_server_start();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (fuzz_server_send(data, size) == 500) {
        fprintf(stderr, "fuzz-request: answered 500\n");
        abort(); /* a 500 is a bug of ours, whatever the bytes */
    }
    return 0;
}
