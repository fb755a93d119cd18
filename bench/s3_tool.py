#!/usr/bin/env python3
"""Small S3 chores for bench/object-store.sh, with boto3 (endpoint and keys from the AWS_* environment).

  s3_tool.py rtt COUNT                      timed HTTP HEADs on one kept-alive connection to AWS_ENDPOINT_URL: the
                                            first (with the connect) and the median of the rest, in ms
  s3_tool.py upload BUCKET PREFIX DIR [T]   every file under DIR to PREFIX/<relative path>, T threads (default 8);
                                            makes the bucket if missing; prints files and bytes
"""
import concurrent.futures
import http.client
import os
import statistics
import sys
import time
import urllib.parse

import boto3
import botocore.config


def client(pool=10):
    return boto3.session.Session().client(
        "s3", endpoint_url=os.environ["AWS_ENDPOINT_URL"],
        config=botocore.config.Config(s3={"addressing_style": "path"}, max_pool_connections=pool,
                                      retries={"max_attempts": 3, "mode": "standard"}))


def rtt(count):
    u = urllib.parse.urlsplit(os.environ["AWS_ENDPOINT_URL"])
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    times = []
    for _ in range(count):
        t = time.perf_counter()
        conn.request("HEAD", "/")       # unsigned: S3Proxy answers 403 at once; the time is the wire's + its own
        conn.getresponse().read()
        times.append((time.perf_counter() - t) * 1000)
    conn.close()
    rest = times[1:]
    print(f"HEAD x{count}: first (connect + request) {times[0]:.1f} ms, then median {statistics.median(rest):.1f} ms"
          f" (min {min(rest):.1f}, max {max(rest):.1f})")


def upload(bucket, prefix, root, threads):
    s3 = client(threads)
    try:
        s3.head_bucket(Bucket=bucket)
    except s3.exceptions.ClientError:
        s3.create_bucket(Bucket=bucket)
    files = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
    prefix = prefix.strip("/")

    def put(path):
        key = os.path.relpath(path, root) if not prefix else prefix + "/" + os.path.relpath(path, root)
        s3.upload_file(path, bucket, key)
        return os.path.getsize(path)

    with concurrent.futures.ThreadPoolExecutor(threads) as ex:
        total = sum(ex.map(put, files))
    print(f"uploaded {len(files)} files, {total} bytes to s3://{bucket}/{prefix}")


if __name__ == "__main__":
    a = sys.argv[1:]
    if a[:1] == ["rtt"] and len(a) == 2:
        rtt(int(a[1]))
    elif a[:1] == ["upload"] and len(a) in (4, 5):
        upload(a[1], a[2], a[3], int(a[4]) if len(a) == 5 else 8)
    else:
        sys.exit(__doc__)
