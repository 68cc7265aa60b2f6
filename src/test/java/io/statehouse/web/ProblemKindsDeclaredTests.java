package io.statehouse.web;

import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import io.statehouse.shared.ProblemException;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.context.annotation.ClassPathScanningCandidateComponentProvider;
import org.springframework.core.type.filter.AssignableTypeFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every kind of problem an exception can raise (its {@code *KIND} constants) is one the contract
 * lists: a module that adds an exception but forgets to declare its kind fails here, not in a
 * client that validates answers against {@code openapi.yaml}.
 */
@Tag("fast")
class ProblemKindsDeclaredTests {

	@Test
	void everyKindAnExceptionRaisesIsInTheContract() throws Exception {
		ClassPathScanningCandidateComponentProvider scanner = new ClassPathScanningCandidateComponentProvider(false);
		scanner.addIncludeFilter(new AssignableTypeFilter(ProblemException.class));
		TreeSet<String> raised = new TreeSet<>();
		List<String> exceptions = new ArrayList<>();
		for (BeanDefinition candidate : scanner.findCandidateComponents("io.statehouse")) {
			Class<?> type = Class.forName(candidate.getBeanClassName());
			exceptions.add(type.getSimpleName());
			for (Field field : type.getDeclaredFields()) {
				if (Modifier.isStatic(field.getModifiers()) && field.getType() == String.class
						&& field.getName().endsWith("KIND")) {
					field.setAccessible(true);
					raised.add(ProblemException.TYPE_PREFIX + field.get(null));
				}
			}
		}
		assertThat(exceptions).as("the scan found the problem exceptions").hasSizeGreaterThan(10);
		assertThat(contractKinds()).containsAll(raised);
	}

	@SuppressWarnings("unchecked")
	private static List<String> contractKinds() throws Exception {
		try (InputStream contract = Files.newInputStream(Path.of("openapi.yaml"))) {
			Map<String, Object> document = new Yaml().load(contract);
			Map<String, Object> components = (Map<String, Object>) document.get("components");
			Map<String, Object> schemas = (Map<String, Object>) components.get("schemas");
			Map<String, Object> problem = (Map<String, Object>) schemas.get("Problem");
			Map<String, Object> properties = (Map<String, Object>) problem.get("properties");
			return (List<String>) ((Map<String, Object>) properties.get("type")).get("enum");
		}
	}

}
