# Weft's container image, for builders with a container engine. The same
# image without one: scripts/build-image.sh (buildah, no daemon).
#
#   docker build -t weft:0.1.0 .
#   docker run -p 6345:6345 -v weft-data:/var/lib/weft weft:0.1.0
#
# Build: the Go toolchain on Debian 12 with cgo, which DuckDB's static
# build needs. Run: distroless cc, which holds exactly the C and C++
# runtimes the binary links (libc, libm, libgcc_s, libstdc++) and no shell,
# as its non-root user 65532.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN scripts/build.sh /out && mkdir -p /data

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/weft /usr/bin/weft
COPY --from=build --chown=65532:65532 --chmod=0700 /data /var/lib/weft
ENV WEFT_LISTEN=0.0.0.0:6345 \
    WEFT_OTLP_GRPC_LISTEN=0.0.0.0:4317 \
    WEFT_DATA_DIR=/var/lib/weft \
    HOME=/var/lib/weft
EXPOSE 6345 4317
VOLUME /var/lib/weft
WORKDIR /var/lib/weft
USER 65532:65532
ENTRYPOINT ["/usr/bin/weft"]
CMD ["serve"]
