# Statehouse in server mode: it talks to a ClickHouse server (STATEHOUSE_CLICKHOUSE_URL).
# The image neither needs nor carries the embedded engine library.

FROM eclipse-temurin:17-jdk AS build
WORKDIR /src
COPY .mvn .mvn
COPY mvnw pom.xml ./
RUN ./mvnw -B -q -DskipEmbeddedEngine dependency:go-offline
COPY src src
RUN ./mvnw -B -q -DskipEmbeddedEngine -Dmaven.test.skip=true package \
 && java -Djarmode=tools -jar target/statehouse-*.jar extract --layers --launcher --destination /layers

FROM eclipse-temurin:17-jre
RUN groupadd --system statehouse && useradd --system --gid statehouse --uid 10001 statehouse
WORKDIR /app
COPY --from=build /layers/dependencies/ ./
COPY --from=build /layers/spring-boot-loader/ ./
COPY --from=build /layers/snapshot-dependencies/ ./
COPY --from=build /layers/application/ ./
USER 10001
EXPOSE 8080
ENV JAVA_TOOL_OPTIONS="-XX:MaxRAMPercentage=75"
ENTRYPOINT ["java", "org.springframework.boot.loader.launch.JarLauncher"]
