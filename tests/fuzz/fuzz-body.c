// SPDX-License-Identifier: MIT
/*
 * fuzz-body.c - one JSON request body, sent to the in-process server on
 * its route. Built once per body (FUZZ_BODY): mkdir, store, link, rename,
 * batch, import. The answer must be a status the API documents for a
 * client's mistake or a success, never a 500 nor silence.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

struct route {
    const char *name, *method, *path;
};

static const struct route routes[] = {
    {"mkdir", "POST", "/api/v1/config/02-simple-children"},
    {"store", "PUT", "/api/v1/config/01-childless/storeme"},
    {"link", "PUT", "/api/v1/config/usb_gadget/fz/configs/c.1/ln"},
    {"rename", "POST", "/api/v1/rename"},
    {"batch", "POST", "/api/v1/batch"},
    {"import", "POST", "/api/v1/import?mode=merge"},
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
        route->method, route->path, "application/json", data, size);

    if (status == 0 || status == 500) {
        /* no answer, or one the server does not mean to give */
        fprintf(stderr, "fuzz-body: %s answered %d\n", route->path, status);
        abort();
    }
    return 0;
}
