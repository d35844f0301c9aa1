// SPDX-License-Identifier: MIT
/*
 * fuzz-body.c - one request body, sent to the in-process server on its
 * route. Built once per body (FUZZ_BODY): mkdir, store, link, rename,
 * batch, import (JSON), and forward (the framing of a batch of forwarded
 * requests, server/fwd-batch.h, each of them run on its own route). The
 * answer must never be a 500; a connection closed without an answer is
 * reported on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

struct route {
    const char *name, *method, *path, *ctype;
};

#define JSON "application/json"

static const struct route routes[] = {
    {"mkdir", "POST", "/api/v1/config/02-simple-children", JSON},
    {"store", "PUT", "/api/v1/config/01-childless/storeme", JSON},
    {"link", "PUT", "/api/v1/config/usb_gadget/fz/configs/c.1/ln", JSON},
    {"rename", "POST", "/api/v1/rename", JSON},
    {"batch", "POST", "/api/v1/batch", JSON},
    {"import", "POST", "/api/v1/import?mode=merge", JSON},
    {"forward", "POST", "/api/v1/forward", "application/x-configfsd-forward"},
};

static const struct route *route;

static const struct {
    const char *path, *body;
} setup[] = {
    {"/api/v1/config/usb_gadget", "{\"name\":\"fz\"}"},
    {"/api/v1/config/usb_gadget/fz/functions", "{\"name\":\"ncm.usb0\"}"},
    {"/api/v1/config/usb_gadget/fz/configs", "{\"name\":\"c.1\"}"},
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        if (strcmp(routes[i].name, FUZZ_BODY) == 0) {
            route = &routes[i];
        }
    }
    if (!route) {
        abort();
    }
    fuzz_server_start();
    /* what the link route needs: a gadget with a function and a config */
    for (size_t i = 0; i < sizeof(setup) / sizeof(setup[0]); i++) {
        int st = fuzz_server_request("POST",
                                     setup[i].path,
                                     "application/json",
                                     setup[i].body,
                                     strlen(setup[i].body));

        if (st != 201 && st != 409) {
            abort();
        }
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int status = fuzz_server_request(
        route->method, route->path, route->ctype, data, size);

    if (status == 500) {
        fprintf(stderr, "fuzz-body: %s answered 500\n", route->path);
        abort(); /* an answer the server does not mean to give */
    }
    if (status == 0) {
        /* Seen a few times under load, never on replay: noted, not
         * failed (docs/security.md, Fuzzing). */
        fprintf(
            stderr, "fuzz-body: %s: no answer (%s)\n", route->path, last_end);
    }
    return 0;
}
