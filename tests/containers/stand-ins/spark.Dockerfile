# A stand-in for the official Spark image docker/executor.Dockerfile copies Spark from, made only when no
# registry answers (tests/container_setup.sh): Spark's distribution as the pyspark package of the audit
# image carries it (bin/, jars/, sbin/), at /opt/spark where the official image keeps it. Its
# /opt/entrypoint.sh and /opt/decom.sh are placeholders that run the command they are given: they let the
# executor image build and run commands here, not start Spark executors on Kubernetes (the official
# image's entrypoint does that).
FROM localhost/kraftwire-audit:latest
USER root
RUN cp -a "$(python -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')" /opt/spark \
 && printf '#!/bin/sh\n# stand-in (tests/containers/stand-ins/spark.Dockerfile): runs its arguments\nexec "$@"\n' \
      > /opt/entrypoint.sh \
 && cp /opt/entrypoint.sh /opt/decom.sh \
 && chmod 755 /opt/entrypoint.sh /opt/decom.sh
LABEL org.kraftwire.stand-in="Spark from pyspark; placeholder entrypoint"
