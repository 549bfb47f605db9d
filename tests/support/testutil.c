/* testutil.c: the failure counter behind CHECK (testutil.h). */
#include "testutil.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int tc_failures = 0;

void *tc_xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

stap_cf32 tc_poison(size_t i) { return (float)(-777.0 - (double)(i % 13)) + I * 1234.5f; }

int tc_count_tmp(const char *d)
{
    DIR *dp = opendir(d);
    if (!dp) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp)))
        if (e->d_name[0] == '.' && strstr(e->d_name, ".tmp.")) n++;
    closedir(dp);
    return n;
}

void tc_remove_tree(const char *d)
{
    DIR *dp = opendir(d);
    if (!dp) return;
    struct dirent *e;
    char p[8400];
    while ((e = readdir(dp))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", d, e->d_name);
        struct stat sb;
        if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) {
            chmod(p, 0700);
            tc_remove_tree(p);
        } else {
            unlink(p);
        }
    }
    closedir(dp);
    rmdir(d);
}
