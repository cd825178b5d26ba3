/* A disk that runs on burst credits, for tests and benchmarks (docs/sustained.md).
 *
 * A FUSE filesystem with one file, `disk`, held in memory, whose every read and write is paced
 * by a token bucket as a cloud volume's I/O credits are: while the bucket holds credits the
 * file serves up to BURST I/Os a second, each I/O spending one credit; the bucket refills at
 * BASELINE credits a second, always, up to BUCKET; once it is empty the file serves BASELINE
 * I/Os a second, and when the file is idle the bucket fills up again. An I/O costs one credit
 * per UNIT bytes or part of it (AWS counts each I/O of up to 256 KiB as one).
 *
 * Put a loop device on `disk` and a filesystem on the loop device, and the filesystem's page
 * cache sits above the paced device as it does above a cloud volume: buffered writes go to
 * memory, and writeback, fsync and direct I/O pay the bucket. The file is opened with FUSE's
 * direct_io, so no page cache of the FUSE file sits between the loop device and the pacing.
 *
 * `status`, a second file, says what the bucket did, one `key=value` a line: credits left,
 * I/Os served, and since the bucket was last filled, when the first I/O came and when the
 * bucket first ran dry (CLOCK_MONOTONIC seconds, −1 for not yet; `now` for comparison), and
 * the credits earned back since then by idling (none, when the disk was kept busy), and the
 * seconds it sat idle while it still held credits after the first I/O (`idle_burst`), with the
 * most of it in any half second (`idle_burst_half_s`): with a deep queue little, unless the
 * machine stalled the I/O on its way (the test, the loop device's worker or this process
 * starved of CPU), which makes the burst's level dip where no cloud disk's does.
 * Writing `refill` to `control` fills the bucket (after mkfs, or before a test).
 *
 *   burstdisk --size BYTES --burst IOPS --baseline IOPS --bucket IOS [--unit BYTES] MOUNTPOINT
 *
 * It stays in the foreground; unmount the mount point (umount) or kill it to stop it.
 * Build: cc -O2 -o burstdisk bench/burstdisk.c $(pkg-config --cflags --libs fuse3)
 */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <errno.h>
#include <fuse.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* An I/O that arrives this soon after the device became free is served as if it had been
 * waiting (at most one service time, and never more than 5 ms): the pace then holds at the
 * configured rate although each I/O's round trip through the loop device and FUSE takes a
 * few tens of microseconds. The rate can never exceed the configured one: the device's
 * clock only moves forward, by one service time per I/O. */
#define MAX_SLACK 0.005

/* The idle time of the burst is kept by tenths of a second, for its first minute. */
#define IDLE_BIN 0.1
#define IDLE_BINS 600

static struct {
    char *img;
    unsigned long long size;
    double burst, baseline, bucket, unit;
    pthread_mutex_t mu;
    double free_at;   /* when the device finishes the last I/O handed to it */
    double credits;
    int started;
    unsigned long long ios, ios_burst, empties;
    double first_io, first_dry; /* since the last refill; < 0: not yet */
    double regained;            /* credits earned back while idle since first_dry */
    double idle_burst;          /* seconds idle after first_io, before first_dry */
    double idle_bins[IDLE_BINS]; /* the same, by IDLE_BIN seconds from first_io */
    int dry;
} d = {.mu = PTHREAD_MUTEX_INITIALIZER, .first_io = -1, .first_dry = -1};

static double mono(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

/* The device sat idle from `from` to `to` while it held credits: counted in its bins. */
static void idle(double from, double to) {
    d.idle_burst += to - from;
    int i = (int)floor((from - d.first_io) / IDLE_BIN);
    for (i = i < 0 ? 0 : i; i < IDLE_BINS; i++) {
        double lo = d.first_io + i * IDLE_BIN, hi = lo + IDLE_BIN;
        double a = from > lo ? from : lo, b = to < hi ? to : hi;
        if (b > a) d.idle_bins[i] += b - a;
        if (hi >= to) break;
    }
}

/* The most idle time in any half second (five bins) of the burst. */
static double idle_half_s(void) {
    double worst = 0;
    for (int i = 0; i < IDLE_BINS; i++) {
        double sum = 0;
        for (int k = i; k < i + 5 && k < IDLE_BINS; k++) sum += d.idle_bins[k];
        if (sum > worst) worst = sum;
    }
    return worst;
}

/* Takes an I/O of `len` bytes in; returns when the device will have completed it. */
static double admit(size_t len) {
    double cost = ceil((double)len / d.unit);
    if (cost < 1) cost = 1;
    pthread_mutex_lock(&d.mu);
    double now = mono();
    if (!d.started) {
        d.started = 1;
        d.free_at = now;
    }
    double start = d.free_at;
    if (now > d.free_at) {
        double late = now - d.free_at;
        double service = cost / (d.credits >= cost ? d.burst : d.baseline);
        double slack = service < MAX_SLACK ? service : MAX_SLACK;
        if (late > slack) {
            start = now;
            if (d.first_io >= 0 && d.first_dry < 0) idle(d.free_at, now);
        }
        /* The bucket refills while the device is idle. */
        double before = d.credits;
        d.credits += d.baseline * (start - d.free_at);
        if (d.credits > d.bucket) d.credits = d.bucket;
        if (d.first_dry >= 0) d.regained += d.credits - before;
    }
    int burst = d.credits >= cost;
    double dt = cost / (burst ? d.burst : d.baseline);
    /* ... and while it works: at the baseline rate it spends what refills. */
    d.credits += d.baseline * dt;
    if (d.credits > d.bucket) d.credits = d.bucket;
    d.credits -= cost;
    if (d.credits < 0) d.credits = 0;
    if (d.first_io < 0) d.first_io = start;
    if (!burst && !d.dry) {
        d.dry = 1;
        d.empties++;
        if (d.first_dry < 0) d.first_dry = start;
    } else if (burst) {
        d.dry = 0;
        d.ios_burst++;
    }
    d.ios++;
    d.free_at = start + dt;
    double done = d.free_at;
    pthread_mutex_unlock(&d.mu);
    return done;
}

static void wait_until(double t) {
    struct timespec ts = {.tv_sec = (time_t)t, .tv_nsec = (long)((t - (time_t)t) * 1e9)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static int status_text(char *buf, size_t cap) {
    pthread_mutex_lock(&d.mu);
    double now = mono(), credits = d.credits;
    if (d.started && now > d.free_at) {
        credits += d.baseline * (now - d.free_at);
        if (credits > d.bucket) credits = d.bucket;
    }
    int n = snprintf(buf, cap,
                     "burst=%.0f\nbaseline=%.0f\nbucket=%.0f\nunit=%.0f\ncredits=%.1f\nios=%llu\n"
                     "ios_burst=%llu\nempties=%llu\nfirst_io=%.6f\nfirst_dry=%.6f\nregained=%.1f\n"
                     "idle_burst=%.6f\nidle_burst_half_s=%.6f\nnow=%.6f\n",
                     d.burst, d.baseline, d.bucket, d.unit, credits, d.ios, d.ios_burst,
                     d.empties, d.first_io, d.first_dry, d.regained, d.idle_burst,
                     idle_half_s(), now);
    pthread_mutex_unlock(&d.mu);
    return n;
}

static void *bd_init(struct fuse_conn_info *conn, struct fuse_config *cfg) {
    /* 1 MiB, so that FUSE does not split a loop device's larger requests into several I/Os
     * the bucket would count one by one (the kernel may lower it). */
    conn->max_write = 1 << 20;
    cfg->direct_io = 1;
    cfg->kernel_cache = 0;
    cfg->attr_timeout = 0;
    cfg->entry_timeout = 0;
    return NULL;
}

static int bd_getattr(const char *path, struct stat *st, struct fuse_file_info *fi) {
    (void)fi;
    memset(st, 0, sizeof *st);
    if (strcmp(path, "/") == 0) {
        st->st_mode = S_IFDIR | 0755;
        st->st_nlink = 2;
    } else if (strcmp(path, "/disk") == 0) {
        st->st_mode = S_IFREG | 0600;
        st->st_nlink = 1;
        st->st_size = d.size;
    } else if (strcmp(path, "/control") == 0) {
        st->st_mode = S_IFREG | 0200;
        st->st_nlink = 1;
    } else if (strcmp(path, "/status") == 0) {
        st->st_mode = S_IFREG | 0444;
        st->st_nlink = 1;
        st->st_size = 4096;
    } else {
        return -ENOENT;
    }
    return 0;
}

static int bd_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags) {
    (void)off, (void)fi, (void)flags;
    if (strcmp(path, "/") != 0) return -ENOENT;
    fill(buf, ".", NULL, 0, 0);
    fill(buf, "..", NULL, 0, 0);
    fill(buf, "disk", NULL, 0, 0);
    fill(buf, "status", NULL, 0, 0);
    fill(buf, "control", NULL, 0, 0);
    return 0;
}

static int bd_open(const char *path, struct fuse_file_info *fi) {
    if (strcmp(path, "/disk") != 0 && strcmp(path, "/status") != 0 &&
        strcmp(path, "/control") != 0)
        return -ENOENT;
    if (strcmp(path, "/status") == 0 && (fi->flags & O_ACCMODE) != O_RDONLY) return -EACCES;
    fi->direct_io = 1;
    return 0;
}

static int bd_read(const char *path, char *buf, size_t len, off_t off,
                   struct fuse_file_info *fi) {
    (void)fi;
    if (strcmp(path, "/status") == 0) {
        char text[1024];
        int n = status_text(text, sizeof text);
        if (off >= n) return 0;
        if (len > (size_t)(n - off)) len = n - off;
        memcpy(buf, text + off, len);
        return len;
    }
    if ((unsigned long long)off >= d.size) return 0;
    if (off + len > d.size) len = d.size - off;
    wait_until(admit(len));
    memcpy(buf, d.img + off, len);
    return len;
}

static int bd_write(const char *path, const char *buf, size_t len, off_t off,
                    struct fuse_file_info *fi) {
    (void)fi;
    if (strcmp(path, "/control") == 0) {
        if (len < 6 || strncmp(buf, "refill", 6) != 0) return -EINVAL;
        pthread_mutex_lock(&d.mu);
        d.credits = d.bucket;
        d.dry = 0;
        d.first_io = d.first_dry = -1;
        d.regained = d.idle_burst = 0;
        memset(d.idle_bins, 0, sizeof d.idle_bins);
        d.ios = d.ios_burst = d.empties = 0;
        pthread_mutex_unlock(&d.mu);
        return len;
    }
    if (strcmp(path, "/disk") != 0) return -EACCES;
    if ((unsigned long long)off >= d.size) return -ENOSPC;
    if (off + len > d.size) len = d.size - off;
    wait_until(admit(len));
    memcpy(d.img + off, buf, len);
    return len;
}

/* The data is in memory: a flush has nothing to wait for (the pacing already made each
 * write take its time). */
static int bd_fsync(const char *path, int datasync, struct fuse_file_info *fi) {
    (void)path, (void)datasync, (void)fi;
    return 0;
}

static int bd_truncate(const char *path, off_t size, struct fuse_file_info *fi) {
    (void)fi;
    if (strcmp(path, "/disk") != 0) return -EACCES;
    return (unsigned long long)size == d.size ? 0 : -EINVAL;
}

static const struct fuse_operations ops = {
    .init = bd_init,
    .getattr = bd_getattr,
    .readdir = bd_readdir,
    .open = bd_open,
    .read = bd_read,
    .write = bd_write,
    .fsync = bd_fsync,
    .truncate = bd_truncate,
};

static void usage(void) {
    fprintf(stderr, "usage: burstdisk --size BYTES --burst IOPS --baseline IOPS --bucket IOS "
                    "[--unit BYTES] MOUNTPOINT\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *mnt = NULL;
    d.unit = 256 * 1024;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (a[0] == '-' && i + 1 < argc) {
            double v = atof(argv[++i]);
            if (strcmp(a, "--size") == 0) d.size = (unsigned long long)v;
            else if (strcmp(a, "--burst") == 0) d.burst = v;
            else if (strcmp(a, "--baseline") == 0) d.baseline = v;
            else if (strcmp(a, "--bucket") == 0) d.bucket = v;
            else if (strcmp(a, "--unit") == 0) d.unit = v;
            else usage();
        } else if (!mnt && a[0] != '-') {
            mnt = a;
        } else {
            usage();
        }
    }
    if (!mnt || d.size == 0 || d.burst <= 0 || d.baseline <= 0 || d.baseline > d.burst ||
        d.bucket < 0 || d.unit < 512)
        usage();
    /* Untouched pages of an anonymous mapping cost no memory: a sparse disk. */
    d.img = mmap(NULL, d.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
    if (d.img == MAP_FAILED) {
        perror("mmap");
        return 2;
    }
    d.credits = d.bucket;
    /* In the foreground, multi-threaded. */
    char *fargv[] = {argv[0], "-f", "-o", "default_permissions,max_threads=16", (char *)mnt,
                     NULL};
    return fuse_main(5, fargv, &ops, NULL);
}
