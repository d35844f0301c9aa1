// SPDX-License-Identifier: MIT
/*
 * driver.c - a main() for the fuzz targets where libFuzzer is not linked
 * (gcc builds, valgrind): runs the target once on each file named, or on
 * each file of each folder named, as `TARGET FILE...` does with libFuzzer.
 * A crash or sanitizer report fails the test like any other.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return 0;
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *data = NULL;
    size_t len = 0, cap = 0;

    if (!f) {
        perror(path);
        return 1;
    }
    for (;;) {
        if (len == cap) {
            uint8_t *n = realloc(data, cap ? cap * 2 : 4096);

            if (!n) {
                fclose(f);
                free(data);
                return 1;
            }
            data = n;
            cap = cap ? cap * 2 : 4096;
        }
        size_t got = fread(data + len, 1, cap - len, f);

        if (got == 0) {
            break;
        }
        len += got;
    }
    fclose(f);
    (void)LLVMFuzzerTestOneInput(data, len);
    free(data);
    printf("ok %s\n", path);
    return 0;
}

static int cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *path)
{
    DIR *d = opendir(path);
    struct dirent *e;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int bad = 0;

    if (!d) {
        perror(path);
        return 1;
    }
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') {
            continue;
        }
        if (n == cap) {
            char **nn = realloc(names, (cap ? cap * 2 : 64) * sizeof(*names));

            if (!nn) {
                bad = 1;
                break;
            }
            names = nn;
            cap = cap ? cap * 2 : 64;
        }
        if (asprintf(&names[n], "%s/%s", path, e->d_name) < 0) {
            bad = 1;
            break;
        }
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof(*names), cmp);
    for (size_t i = 0; i < n; i++) {
        bad |= run_file(names[i]);
        free(names[i]);
    }
    free(names);
    return bad;
}

int main(int argc, char **argv)
{
    int bad = 0;

    (void)LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        struct stat st;

        if (stat(argv[i], &st) < 0) {
            perror(argv[i]);
            bad = 1;
        } else if (S_ISDIR(st.st_mode)) {
            bad |= run_dir(argv[i]);
        } else {
            bad |= run_file(argv[i]);
        }
    }
    return bad;
}
