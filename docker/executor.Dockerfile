# A Spark executor image for `kraftwire audit` on Kubernetes. The official Spark 4 images carry Python
# 3.10 and kraftwire needs 3.11, so this takes Spark (and its entrypoint) from the official image of the
# cluster's Spark version and puts it beside Python 3.11 with the libraries executors import: pyarrow,
# crc32c and construct (the kraftwire code itself comes from the driver, which ships it as a zip).
# Build from the repository root (audit/README.md, "Kubernetes"):
#   docker build -f docker/executor.Dockerfile --build-arg SPARK_IMAGE=spark:4.0.1-scala2.13-java17-ubuntu \
#     -t kraftwire-executor .
ARG SPARK_IMAGE=spark:4.0.1-scala2.13-java17-ubuntu
FROM ${SPARK_IMAGE} AS spark

FROM python:3.11-slim-bookworm
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
# (java's post-install links its manual page: a slim base may have no /usr/share/man/man1 to link into)
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && apt-get install -y --no-install-recommends openjdk-17-jre-headless tini procps \
 && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /opt/java \
 && ln -s "$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")" /opt/java/openjdk \
 && useradd --system --uid 185 --gid 0 --home-dir /opt/spark/work-dir spark
COPY --from=spark /opt/spark /opt/spark
COPY --from=spark /opt/entrypoint.sh /opt/decom.sh /opt/
# the versions kraftwire[audit] resolves to: pyarrow for the tables, crc32c and construct for the codec
RUN pip install "pyarrow>=18" "crc32c>=2.4" "construct==2.10.70" \
 && mkdir -p /opt/spark/work-dir && chown spark:0 /opt/spark/work-dir && chmod g+w /opt/spark/work-dir
ENV SPARK_HOME=/opt/spark JAVA_HOME=/opt/java/openjdk PYSPARK_PYTHON=/usr/local/bin/python3.11
WORKDIR /opt/spark/work-dir
USER 185
ENTRYPOINT ["/opt/entrypoint.sh"]
